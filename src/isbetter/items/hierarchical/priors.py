r"""Prior settings of the items' hierarchical paired model, as a frozen, documented object."""

from __future__ import annotations

from dataclasses import dataclass

from isbetter.inference.prior_settings import PositivePriors

__all__ = ["ItemsHierarchicalPriors"]


@dataclass(frozen=True)
class ItemsHierarchicalPriors(PositivePriors):
    r"""Priors of the hierarchical paired model of binary items over subtasks.

    On the logit scale of A's share :math:`s_t` of the discordant items and of the
    discordance rate :math:`\phi_t` (DESIGN §4.3):

    .. math::

        \operatorname{logit} s_t &\sim t_\nu(\mu, \sigma), \quad
        \mu \sim N(0, a_\mu), \quad \sigma \sim \text{Half-}N(a_\sigma) \\
        \operatorname{logit} \phi_t &\sim N(\mu_\phi, \tau_\phi), \quad
        \mu_\phi \sim N(0, a_\phi), \quad \tau_\phi \sim \text{Half-}N(a_\tau) \\
        \nu - 1 &\sim \operatorname{Gamma}(\alpha, \beta) \ \text{(rate } \beta), \quad
        \alpha \sim U(\alpha_l, \alpha_u), \ \beta \sim U(\beta_l, \beta_u)

    Why these (weakly informative: they rule out only what no comparison shows, and
    the data of a benchmark's thousands of items outweigh them):

    * :math:`\mu \sim N(0, 1.5)`: centred on "neither model wins more of the items
      they disagree on" (the prior is symmetric in A and B); 95% of its mass puts the
      population's share between 0.05 and 0.95, and a share beyond that — one model
      right on 19 of every 20 items where they disagree — is no close comparison.
      Student-t's location on the logit scale as Gelman et al.'s (2008) weakly
      informative scale 2.5 for logistic coefficients, tightened because a
      coefficient there multiplies a standardised input and :math:`\mu` is itself
      the log-odds.
    * :math:`\sigma \sim \text{Half-}N(1)`: the spread of the direction over subtasks;
      a half-normal on a group-level scale (Gelman 2006) keeps :math:`\sigma` away
      from implausibly large values where few subtasks cannot (an sd of 2 on the
      logit scale — shares from 0.12 to 0.88 within one sd — is already extreme),
      while its mode at 0 lets full pooling through when the subtasks agree.
      Outlying subtasks are the Student-t's task, not :math:`\sigma`'s.
    * :math:`\mu_\phi \sim N(0, 2.5)`: the discordance rate of two models is anywhere
      from below 1% (two checkpoints of one model) to above 50%; N(0, 2.5) puts 95%
      of its mass between 0.7% and 99.3% (Gelman et al. 2008's scale).
    * :math:`\tau_\phi \sim \text{Half-}N(1)`: the spread of the discordance rate over
      subtasks, as :math:`\sigma`; it is well identified by the items either way.
    * :math:`\nu`: as the hierarchical model of per-fold scores
      (:class:`~isbetter.cv.hierarchical.priors.HierarchicalPriors`, Corani et al.
      2017, DESIGN §3.2): :math:`\nu - 1 \sim \mathrm{Gamma}(\alpha, \beta)` with
      :math:`\alpha \sim U(1, 2)`, :math:`\beta \sim U(0.01, 0.1)`, heavy tails allowed
      (robust pooling: one subtask where a model is far better does not drag the others).

    Attributes
    ----------
    alpha_lower, alpha_upper : float, default: 1.0, 2.0
        Bounds of the uniform prior on the Gamma's shape (Corani et al. 2017).
    beta_lower, beta_upper : float, default: 0.01, 0.1
        Bounds of the uniform prior on its rate.
    mu_scale : float, default: 1.5
        :math:`a_\mu`.
    sigma_scale : float, default: 1.0
        :math:`a_\sigma`.
    mu_phi_scale : float, default: 2.5
        :math:`a_\phi`.
    tau_phi_scale : float, default: 1.0
        :math:`a_\tau`.

    References
    ----------
    .. [1] A. Gelman (2006). Prior distributions for variance parameters in hierarchical
       models. *Bayesian Analysis* 1(3), 515-534.
    .. [2] A. Gelman, A. Jakulin, M. G. Pittau, Y.-S. Su (2008). A weakly informative
       default prior distribution for logistic and other regression models. *Annals of
       Applied Statistics* 2(4), 1360-1383.
    .. [3] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
       Statistical comparison of classifiers through Bayesian hierarchical modelling.
       *Machine Learning* 106(11), 1817-1837.

    Examples
    --------
    >>> ItemsHierarchicalPriors().mu_scale
    1.5
    >>> ItemsHierarchicalPriors(sigma_scale=0.5).to_dict()["sigma_scale"]
    0.5
    """

    alpha_lower: float = 1.0
    alpha_upper: float = 2.0
    beta_lower: float = 0.01
    beta_upper: float = 0.1
    mu_scale: float = 1.5
    sigma_scale: float = 1.0
    mu_phi_scale: float = 2.5
    tau_phi_scale: float = 1.0

    @property
    def scales(self) -> tuple[float, float, float, float]:
        r"""The four scales :math:`a_\mu, a_\sigma, a_\phi, a_\tau`, in the density's order."""
        return (self.mu_scale, self.sigma_scale, self.mu_phi_scale, self.tau_phi_scale)

    @property
    def nu_bounds(self) -> tuple[float, float, float, float]:
        r"""``alpha_lower, alpha_upper, beta_lower, beta_upper`` of :math:`\nu`'s prior."""
        return (self.alpha_lower, self.alpha_upper, self.beta_lower, self.beta_upper)
