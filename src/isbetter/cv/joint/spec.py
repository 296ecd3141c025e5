r"""Prior settings and prepared data of the joint correlated model of K systems.

The joint model (``../shared/DESIGN.md`` §4.2) extends the hierarchical
correlated-t model of Corani et al. (2017) [1]_ from the differences of two
systems to the scores of K systems at once. For data set i, system k, fold f
(the same :math:`n_i` folds for every system):

.. math::

    x_{i\cdot f} = \mu_{if} 1 + \theta_i + e_{i\cdot f}, \quad
    \theta_i = b + u_i, \quad
    e_{i\cdot\cdot} \sim MN(0, \Sigma_i, M_i), \quad M_i = (1-\rho_i)I + \rho_i 11^T,

with the fold effects :math:`\mu_{if}` (flat prior) integrated out exactly: only
the K - 1 contrasts of the systems are observed. The noise covariance of the
contrasts, :math:`\Sigma_i`, has a conjugate inverse-Wishart prior and is
integrated out in closed form (:mod:`.likelihood`). By default the deviations
:math:`u_i` of data set i from the effects :math:`b` are independent Student-t
components (``JointPriors()``, ``tails="components"``; :class:`JointPriors`). With
one shared :math:`\nu` (``JointPriors(tails="shared")``) they are multivariate
Student-t: their contrasts
:math:`\tilde u_i = H^T u_i \sim N(0, \Omega / \lambda_i)`,
:math:`\lambda_i \sim \operatorname{Gamma}(\nu/2, \nu/2)`, so every pair's
deviation :math:`u_{ia} - u_{ib}` is :math:`t_\nu` as in the pairwise model, with
the pair's own scale :math:`\sigma_{ab}^2 = c_{ab}^T \Omega c_{ab}` (the K(K-1)/2
pairwise scales, kept consistent by one covariance matrix). :math:`\Omega` has an
inverse-Wishart prior with a fixed scale (the shared tails' default) or, chosen with
``JointPriors(spread_prior="huang-wand")``, Huang and Wand's prior (half-t scales;
inverse-Wishart given one mixing variable :math:`\psi`; :class:`JointPriors`,
``docs/joint_prior.md``), and is integrated out given :math:`\psi` and the
:math:`\lambda_i` (:mod:`.pymc_backend`).

**Why not DESIGN §4.2's independent noise.** The design gives each system its own
noise :math:`\sigma_{ik}` and each deviation its own :math:`t(\nu, 0, s_k)`. With
independent noise the variances of two systems' fold differences add up:
:math:`\operatorname{var}(a-b) + \operatorname{var}(c-d) = \sigma_a^2 + \sigma_b^2
+ \sigma_c^2 + \sigma_d^2 = \operatorname{var}(a-c) + \operatorname{var}(b-d)`. The
shipped UCI results break this: j48/j48gr and aode/hnb are two clusters of
near-identical classifiers, and with (a, b, c, d) = (j48, j48gr, aode, hnb) the right
side is 2.6 times the left, pooled over the 54 data sets (larger on 51 of them),
while quadruples that do not split a cluster keep it within 4%
(``tests/cv/test_joint.py``). Independent noise would then overstate how much two
near-identical systems' differences vary and understate the others, so the noise of
the contrasts gets a full covariance :math:`\Sigma_i` per data set, and the
deviations a full covariance :math:`\Omega` (each pair its own scale, as K(K-1)/2
pairwise fits have). The diagonal noise of the design is the special case
:math:`\Sigma_i = H^T D_i H`, and for K = 2, given :math:`\Sigma_i`, the likelihood is
the pairwise model's (Corani et al. 2017) with :math:`\sigma_i^2 = 2\Sigma_i` (both
tested against dense densities).

This module checks a :class:`~isbetter.cv.scores.ScoreTable`,
orients and scales its scores and computes each data set's sufficient statistics —
the fold means and the cross-product matrix of the within-fold deviations — in
orthonormal contrast coordinates, and the data-dependent prior settings
(:func:`prepare`).

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] C. Nadeau, Y. Bengio (2003). Inference for the generalization error.
   *Machine Learning* 52, 239-281.
.. [3] A. Gelman, J. Carlin, H. Stern, D. Dunson, A. Vehtari, D. Rubin (2013).
   *Bayesian Data Analysis*, 3rd ed., section 3.6 (the inverse-Wishart prior).
.. [4] A. K. Gupta, D. K. Nagar (2000). *Matrix Variate Distributions*,
   theorem 4.2.1 (the matrix-variate t).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

import numpy as np
from scipy import special

from isbetter.core.errors import InputError, InputTypeError
from isbetter.cv.correlation import resolve_rho
from isbetter.cv.hierarchical.priors import PositivePriors
from isbetter.cv.hierarchical.spec import ZERO_VARIANCE_RTOL, zero_variance_sd
from isbetter.cv.joint.likelihood import sufficient_statistics
from isbetter.cv.scores import ScoreTable

__all__ = [
    "COMPONENTS_PLACEHOLDERS",
    "COMPONENT_SHEAR",
    "PLACEHOLDER_SCALARS",
    "SPREAD_PLACEHOLDERS",
    "JointData",
    "JointPriors",
    "SpreadPrior",
    "Tails",
    "contrast_basis",
    "prepare",
    "robust_pair_spread",
]

#: 1 / Phi^-1(3/4): the median absolute deviation times this estimates a normal's sd
MAD_TO_SD = 1.482602218505602

#: values of the scalar data of :meth:`JointData.model_data` (prior settings) that
#: stand in until a fit sets them: the PyMC model's placeholders, the compiled density's
#: warm-up
PLACEHOLDER_SCALARS = {
    "const": 0.0,
    "effect_hi": 10.0,
    "spread_df": 2.0,
    "alpha_lo": 1.0,
    "alpha_hi": 2.0,
    "beta_lo": 0.01,
    "beta_hi": 0.1,
    "per_system": 0.0,
}
#: the one scalar of the deviations' covariance prior each form adds: the fixed diagonal
#: psi of the inverse-Wishart's scale, or the rate of psi's Gamma prior
SPREAD_PLACEHOLDERS = {"inverse-wishart": {"spread_var": 1.0}, "huang-wand": {"spread_rate": 1.0}}

#: the data of independent components (``tails="components"``) beside
#: :data:`PLACEHOLDER_SCALARS`: the components' half-t scale A and the flag
COMPONENTS_PLACEHOLDERS = {"half_t_scale": 1.0, "components": 1.0}
#: the components' scales are sampled sheared along nu (both backends): the free
#: coordinate is u_j with log s_j = u_j + COMPONENT_SHEAR * log(nu_j / (nu_j + 2)) / 2, a
#: map of unit Jacobian; with light tails the data fix a component's variance
#: s^2 nu / (nu - 2), so s falls with nu along a ridge, which u follows
COMPONENT_SHEAR = 1.0

#: the power m of the components' raw matrix R's prior, density proportional to
#: exp(-|R|^2/2) |det R|^m: a function of R^T R, so Q = Gram-Schmidt(R) stays Haar (same
#: law), while each Gram-Schmidt diagonal U_jj ~ chi_(d - j + m) stays away from 0, where a
#: well-identified direction's ray in R-space narrows into a funnel (with m = 0, the
#: Gaussian R, the divergences of j48 j48gr nbc started at a smallest column norm of
#: 0.05-0.2, the draws' median 0.83). m = 4: 322 -> 1 divergences there; m = 8 let single
#: chains of the five UCI classifiers stick where the narrow scale is small
#: (validation/results/joint_components_uci5_detpow*)
DIRECTION_DET_POWER = 4.0


def direction_prior_const(d: int) -> float:
    """Return the log normaliser of R's prior: log of (2 pi)^(d^2/2) E|det R|^m, R Gaussian.

    E|det R|^m is the product over k = 1..d of E[chi_k^m] = 2^(m/2) Gamma((k+m)/2)/Gamma(k/2)
    (Bartlett's decomposition), m = :data:`DIRECTION_DET_POWER`.
    """
    m = DIRECTION_DET_POWER
    total = 0.5 * d * d * math.log(2.0 * math.pi)
    for k in range(1, d + 1):
        total += 0.5 * m * math.log(2.0) + math.lgamma(0.5 * (k + m)) - math.lgamma(0.5 * k)
    return total


#: the prior of the deviations' covariance Omega (:class:`JointPriors`)
SpreadPrior = Literal["inverse-wishart", "huang-wand"]
#: the deviations' tails (:class:`JointPriors`): one nu and one weight per data set, the
#: grouped t (one nu per system and one weight per data set and system), or independent
#: t components (one nu per component of the contrasts; sampled as scale mixtures, one
#: weight per data set and component, each data set's deviations integrated out)
Tails = Literal["shared", "per-system", "components"]
#: per form of that prior, the defaults of spread_df, spread_scale and noise_scale
_FORM_DEFAULTS = {"inverse-wishart": (1.0, 1.0, 1.0), "huang-wand": (2.0, 10.0, 0.001)}


@dataclass(frozen=True)
class JointPriors(PositivePriors):
    r"""Priors of the joint correlated model, in the spirit of Corani et al. (2017).

    With the scores scaled by the mean per-data-set standard deviation of two
    systems' fold differences (:attr:`JointData.scale`), :math:`H` an orthonormal
    basis of the vectors summing to zero (:func:`contrast_basis`), :math:`d = K - 1`
    and :math:`D` the largest difference of two systems on one fold:

    .. math::

        b &= H\beta, \quad \beta_j \sim U(-b_\delta \sqrt{K} D,\; b_\delta \sqrt{K} D) \\
        \nu - 1 &\sim \operatorname{Gamma}(\alpha, \beta), \quad
        \alpha \sim U(\alpha_l, \alpha_u), \ \beta \sim U(\beta_l, \beta_u) \\
        \Sigma_i &\sim \operatorname{IW}(d + d_\Sigma,\; c_\Sigma \bar v I_d)

    Only the differences of the effects are identified, so :math:`b` sums to zero,
    flat within a box that holds every effect vector whose pairwise differences are
    within :math:`b_\delta D` (the bound of the pairwise model's :math:`\delta_0`);
    :math:`\nu`'s prior is the reference one [1]_ [2]_.

    ``tails`` sets the law of the deviations' contrasts :math:`\tilde u_i` (the joint
    model's counterpart of the pairwise :math:`\sigma_0` and :math:`\nu`).

    ``"components"`` (the default)
        Independent t components, :math:`\tilde u_i = Q \operatorname{diag}(s) z_i`,
        :math:`z_{ij} \sim t_{\nu_j}(0, 1)` independent (:math:`j = 1 \ldots d`),
        :math:`Q` Haar-distributed (Gram-Schmidt of a matrix of independent
        :math:`N(0, 1)`), :math:`s_j \sim` half-:math:`t_{\nu_\Omega}(0, A)`,
        :math:`A = b_\Omega s / \sqrt 2` with :math:`s` a robust spread of the pairs'
        per-data-set mean differences (:func:`robust_pair_spread`), :math:`\nu_j - 1`
        with the pairwise model's prior each. Each scale's density is flat near zero, so
        at K = 2 (the shared Huang-Wand form in law) it agrees with the pairwise
        hierarchical model (the ten UCI pairs within 0.025), one outlying data set is
        absorbed along one direction by a small :math:`\nu_j`, and near-identical pairs
        (a tiny spread with a few large differences) keep their own :math:`\nu_j`. Only
        ``spread_prior="huang-wand"`` (whose :math:`A`, :math:`\nu_\Omega` and
        :math:`c_\Sigma` it takes) applies. Each data set's deviations are integrated
        out given one noise weight, and drawn after the fit (``docs/joint_prior.md``).
    ``"shared"``
        One weight :math:`\lambda_i` per data set and one :math:`\nu`, so every pair's
        deviation is :math:`t_\nu`; the covariance :math:`\Omega` of the contrasts is
        integrated out given :math:`\psi` (conjugate), with one of two priors,
        ``spread_prior`` (naming one without ``tails`` chooses these tails):
        ``"inverse-wishart"`` (the shared tails' default, the joint model's default
        before issue 29), :math:`\Omega \sim \operatorname{IW}(d + d_\Omega,\; \psi I_d)`
        with the fixed :math:`\psi = c_\Omega \bar m`, :math:`\bar m` the variance
        across the data sets of a contrast's mean [3]_ (defaults :math:`d_\Omega = 1`,
        :math:`c_\Omega = 1`, :math:`c_\Sigma = 1`); its density vanishes near zero
        spread [4]_, so at K = 2 it disagrees with the pairwise model and one outlying
        data set inflates every scale. ``"huang-wand"``, Huang and Wand's prior [5]_
        with one mixing variable, :math:`\Omega \mid \psi \sim \operatorname{IW}(\nu_\Omega
        + d - 1, \psi I_d)`, :math:`\psi \sim \operatorname{Gamma}(\tfrac12,\ \text{rate }
        1/(2\nu_\Omega A^2))`: every contrast's standard deviation is
        half-:math:`t_{\nu_\Omega}(0, A)`, and with :math:`\nu_\Omega = 2` every
        correlation is uniform (defaults :math:`\nu_\Omega = 2`, :math:`b_\Omega = 10`,
        :math:`c_\Sigma = 0.001`); but the one :math:`\nu` serves every pair, and on
        the UCI data (K = 5) two near-identical pairs drive it to about 1.1, which leaves
        every pair undecided.
    ``"per-system"``
        The grouped t of ``docs/joint_prior.md``, :math:`u_{ik} =
        (H\omega_i)_k/\sqrt{\lambda_{ik}}`, :math:`\omega_i \sim N(0, \Omega)`,
        :math:`\lambda_{ik} \sim \operatorname{Gamma}(\nu_k/2, \nu_k/2)`, :math:`\nu_k -
        1 \sim \operatorname{Gamma}(\alpha, \beta)` with :math:`\alpha \sim U(\alpha_l,
        \alpha_u)`, :math:`\beta \sim U(\beta_l, \beta_u)` shared by the systems; its
        ``spread_prior`` defaults to ``"huang-wand"``. It does not reproduce the
        pairwise model at K = 2 (``docs/joint_prior.md``).

    The noise covariance :math:`\Sigma_i` of data set i's contrasts has a conjugate
    inverse-Wishart prior (integrated out in closed form): :math:`\bar v` is the mean
    per-fold variance of a contrast. :math:`d_\Sigma = 1`, :math:`c_\Sigma = 1` add
    one pseudo-observation of that variance to each data set's sum of squares
    (posterior mean of :math:`\Sigma_i` about :math:`(c_\Sigma \bar v I + S_i)/n_i`),
    which keeps the posterior proper where a contrast does not vary (two systems with
    the same scores) and with fewer folds than systems. The Huang-Wand form's
    :math:`c_\Sigma = 0.001` moves a data set's noise by more than 10% only where its
    per-fold variance is below :math:`c_\Sigma/(0.1 n_i)` of the mean (with
    :math:`c_\Sigma = 1` the noise of the UCI data sets on which two classifiers nearly
    agree doubled, and the K = 2 probabilities moved by up to 0.04 from the pairwise
    model's).

    Attributes
    ----------
    alpha_lower, alpha_upper, beta_lower, beta_upper : float, default: 1, 2, 0.01, 0.1
        Bounds of the hyper-priors of :math:`\nu - 1` ([1]_ section 3.1).
    delta0_bound : float, default: 1.0
        :math:`b_\delta`: the effects' box, times the largest one-fold difference; with
        ``tails="components"`` the standard deviation :math:`\tau` of the effects'
        isotropic Gaussian prior :math:`\beta \sim N(0, \tau^2 I)` in the contrasts.
    spread_df : float, optional
        ``"inverse-wishart"``: :math:`d_\Omega` (default 1); ``"huang-wand"``:
        :math:`\nu_\Omega`, the half-t's degrees of freedom (default 2: uniform
        correlations).
    spread_scale : float, optional
        ``"inverse-wishart"``: :math:`c_\Omega` (default 1); ``"huang-wand"``:
        :math:`b_\Omega`, a pair's half-t scale :math:`\sqrt 2 A` over the robust
        spread :math:`s` (default 10).
    noise_df : float, default: 1.0
        :math:`d_\Sigma`.
    noise_scale : float, optional
        :math:`c_\Sigma`: 1 with ``"inverse-wishart"``, 0.001 with ``"huang-wand"``.
    spread_prior : {"inverse-wishart", "huang-wand"}, optional
        The prior of the spread (default ``"huang-wand"``; with ``tails="shared"``
        ``"inverse-wishart"``); the unset ``spread_df``, ``spread_scale`` and
        ``noise_scale`` take its defaults.
    tails : {"components", "shared", "per-system"}, optional
        One :math:`\nu` per independent component (the default), one for all the
        deviations (the default when ``spread_prior`` is named), or one per system
        (the grouped t). The components are the robust prior that agrees with the
        pairwise model at K = 2; their effects are integrated out and NUTS samples them
        at a high target acceptance (``docs/joint_prior.md``); a fit warns when it
        misses the convergence rule. They cost seconds at a few systems and minutes at
        many (about 10 at K = 30 on two cores, where the shared forms take seconds).

    References
    ----------
    .. [1] Corani et al. (2017), *Machine Learning* 106, 1817-1837, section 3.
    .. [2] baycomp 1.0.3, ``HierarchicalTest`` and ``hierarchical-t-test.stan``.
    .. [3] Gelman et al. (2013), *Bayesian Data Analysis*, 3rd ed., section 3.6.
    .. [4] A. Gelman (2006). Prior distributions for variance parameters in
       hierarchical models. *Bayesian Analysis* 1(3), 515-534.
    .. [5] A. Huang, M. P. Wand (2013). Simple marginally noninformative prior
       distributions for covariance matrices. *Bayesian Analysis* 8(2), 439-452.

    Examples
    --------
    >>> JointPriors().tails, JointPriors().spread_prior, JointPriors().spread_df
    ('components', 'huang-wand', 2.0)
    >>> JointPriors(tails="shared").spread_prior
    'inverse-wishart'
    >>> JointPriors(spread_prior="inverse-wishart").tails
    'shared'
    >>> JointPriors(spread_prior="huang-wand").noise_scale
    0.001
    >>> JointPriors(tails="per-system").spread_prior
    'huang-wand'
    >>> JointPriors(tails="components").spread_prior
    'huang-wand'
    >>> JointPriors(noise_scale=0.5).to_dict()["noise_scale"]
    0.5
    """

    _CHOICES: ClassVar[tuple[str, ...]] = ("spread_prior", "tails")

    alpha_lower: float = 1.0
    alpha_upper: float = 2.0
    beta_lower: float = 0.01
    beta_upper: float = 0.1
    delta0_bound: float = 1.0
    spread_df: float = None  # type: ignore[assignment]  # the form's default
    spread_scale: float = None  # type: ignore[assignment]
    noise_df: float = 1.0
    noise_scale: float = None  # type: ignore[assignment]
    spread_prior: SpreadPrior = None  # type: ignore[assignment]  # the tails' default
    tails: Tails = None  # type: ignore[assignment]  # components unless a spread prior is named

    def __post_init__(self) -> None:
        if self.tails is None:  # a named spread prior is one of the shared-nu forms
            tails = "components" if self.spread_prior is None else "shared"
            object.__setattr__(self, "tails", tails)
        _check_choice(self.tails, "tails", get_args(Tails))
        if self.spread_prior is None:
            default = "inverse-wishart" if self.tails == "shared" else "huang-wand"
            object.__setattr__(self, "spread_prior", default)
        _check_choice(self.spread_prior, "spread_prior", get_args(SpreadPrior))
        if self.tails == "components" and self.spread_prior != "huang-wand":
            raise InputError(
                "`JointPriors.tails='components'` takes its components' scales from Huang "
                f"and Wand's form: `spread_prior` must be 'huang-wand', got {self.spread_prior!r}."
            )
        defaults = _FORM_DEFAULTS[self.spread_prior]
        for name, default in zip(
            ("spread_df", "spread_scale", "noise_scale"), defaults, strict=True
        ):
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        super().__post_init__()


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> None:
    """Raise unless `value` is one of `choices` (the field `name` of :class:`JointPriors`)."""
    if not isinstance(value, str):
        raise InputTypeError(
            f"`JointPriors.{name}` must be one of {', '.join(map(repr, choices))}, "
            f"got {type(value).__name__} {value!r}."
        )
    if value not in choices:
        raise InputError(
            f"`JointPriors.{name}` must be one of {', '.join(map(repr, choices))}, got {value!r}."
        )


def contrast_basis(k: int) -> np.ndarray:
    """Return a ``(k, k - 1)`` orthonormal basis of the vectors of length `k` summing to 0.

    The Helmert basis: column j compares system j + 1 with the systems before it.

    Examples
    --------
    >>> h = contrast_basis(3)
    >>> bool(np.allclose(h.sum(axis=0), 0.0)), bool(np.allclose(h.T @ h, np.eye(2)))
    (True, True)
    """
    h = np.zeros((k, k - 1))
    for j in range(1, k):
        h[:j, j - 1] = 1.0
        h[j, j - 1] = -float(j)
        h[:, j - 1] /= math.sqrt(j * (j + 1))
    return h


@dataclass(frozen=True)
class JointData:
    r"""Oriented, scaled sufficient statistics of K systems on q data sets, and prior bounds.

    Attributes
    ----------
    systems : tuple of str
        The K systems, in the order of the last axes below.
    datasets : tuple of str
        The q data sets.
    metric : str
        The metric.
    higher_is_better : bool
        Its direction; the scores are oriented so that larger is better.
    scale : float
        Scores are divided by this (score units per model unit): the mean over data
        sets and pairs of systems of the population sd of the fold differences.
    n : numpy.ndarray
        ``(q,)`` scores per system and data set (runs x folds).
    rho : numpy.ndarray
        ``(q,)`` correlation of the scores within a data set.
    means : numpy.ndarray
        ``(q, K - 1)`` the fold means in orthonormal contrast coordinates
        (:math:`H^T \bar x_i`, scaled and oriented).
    cross : numpy.ndarray
        ``(q, K - 1, K - 1)`` the cross-products of the within-fold deviations in
        the same coordinates (:math:`H^T R_i H`).
    mean_scores : numpy.ndarray
        ``(q, K)`` raw mean score of each system on each data set.
    effect_hi : float
        The box of the effects' coordinates (scaled units); with independent components
        the standard deviation of their Gaussian prior.
    spread_prior : {"inverse-wishart", "huang-wand"}
        The form of :math:`\Omega`'s prior (:class:`JointPriors`).
    spread_df : float
        The degrees of freedom of :math:`\Omega`'s inverse-Wishart (given
        :math:`\psi`): :math:`d + d_\Omega`, or :math:`\nu_\Omega + d - 1`.
    spread_var : float
        Scaled units: the inverse-Wishart's fixed :math:`\psi`, or :math:`A^2`, the
        square of the half-t scale of each contrast's standard deviation (a pair's
        scale is :math:`\sqrt 2 A`).
    noise_df, noise_var : float
        The same of each noise covariance :math:`\Sigma_i`.
    tails : {"shared", "per-system", "components"}
        The deviations' tails (:class:`JointPriors`).
    zero_variance : tuple of str
        The data sets on which the contrasts do not vary in some direction (two systems
        with the same score on every fold): that direction's noise is the floor below.
    zero_variance_sd : float or None
        Score units: the per-fold sd of a pair's difference given to those directions
        (the pairwise model's rule, :func:`prepare`); None where no data set has one.
    """

    systems: tuple[str, ...]
    datasets: tuple[str, ...]
    metric: str
    higher_is_better: bool
    scale: float
    n: np.ndarray = field(repr=False)
    rho: np.ndarray = field(repr=False)
    means: np.ndarray = field(repr=False)
    cross: np.ndarray = field(repr=False)
    mean_scores: np.ndarray = field(repr=False)
    effect_hi: float
    spread_prior: SpreadPrior
    spread_df: float
    spread_var: float
    noise_df: float
    noise_var: float
    tails: Tails = "shared"
    zero_variance: tuple[str, ...] = ()
    zero_variance_sd: float | None = None

    @property
    def n_systems(self) -> int:
        """The number of systems, K."""
        return len(self.systems)

    @property
    def n_datasets(self) -> int:
        """The number of data sets, q."""
        return len(self.datasets)

    def model_data(self, priors: JointPriors) -> dict[str, Any]:
        r"""Return the values of the model's ``pm.Data`` containers for this fit.

        Per data set, :func:`.likelihood.marginal_loglik` is
        ``const_i - power_i * log1p(weight_i * |root_i v|^2)``, ``v = means_i - beta -
        u~_i``, with ``root_i`` the upper triangular root of :math:`B_i^{-1}`
        (``root^T root``). The model samples :math:`\eta_i` with
        ``u~_i = means_i - beta - transform_i eta_i``, ``transform_i = root_i^{-1} /
        sqrt(2 power_i weight_i)``, in which the likelihood is
        ``-power_i * log1p(|eta_i|^2 / (2 power_i))``: about standard normal.
        ``const`` holds every data-only term: the likelihood's, the Jacobian of
        that map, and the constants of :math:`\Omega`'s integral. ``spread_df`` is the
        inverse-Wishart's degrees of freedom; with the inverse-Wishart prior
        ``spread_var`` is its fixed :math:`\psi`, with Huang and Wand's ``spread_rate``
        is the rate :math:`1/(2\nu_\Omega A^2)` of :math:`\psi`'s Gamma prior (the
        one key of :data:`SPREAD_PLACEHOLDERS` of the form).
        """
        d = self.n_systems - 1
        q = self.n_datasets
        n, rho = self.n, self.rho
        scatter = self.noise_var * np.eye(d) + self.cross / (1.0 - rho)[:, None, None]
        root = np.linalg.cholesky(np.linalg.inv(scatter)).transpose(0, 2, 1)
        nu0 = self.noise_df
        power = (nu0 + n) / 2.0
        weight = n / (1.0 + (n - 1.0) * rho)
        transform = np.triu(np.linalg.inv(root)) / np.sqrt(2.0 * power * weight)[:, None, None]
        log_det_m = (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)
        likelihood = (
            -0.5 * d * n * math.log(math.pi)
            - 0.5 * d * log_det_m
            + special.multigammaln(power, d)
            - special.multigammaln(nu0 / 2.0, d)
            + 0.5 * nu0 * d * math.log(self.noise_var)
            - power * np.linalg.slogdet(scatter)[1]
        )
        jacobian = np.log(np.diagonal(transform, axis1=1, axis2=2)).sum()
        nu_u = self.spread_df
        fixed = self.spread_prior == "inverse-wishart"
        # |psi I|^(nu_u / 2) of the inverse-Wishart's density: a constant when psi is fixed
        psi_term = 0.5 * nu_u * d * math.log(self.spread_var) if fixed else 0.0
        spread = (
            -0.5 * d * q * math.log(math.pi)
            + psi_term
            + special.multigammaln((nu_u + q) / 2.0, d)
            - special.multigammaln(nu_u / 2.0, d)
        )
        if self.tails == "components":  # no Omega to integrate out: no spread constants
            mixture = _mixture_const(power, d)
            return {
                "means": self.means,
                "transform": transform,
                "power": power,
                "const": np.asarray(float(likelihood.sum() + jacobian + mixture)),
                "effect_hi": np.asarray(self.effect_hi),
                "spread_df": np.asarray(nu_u - d + 1.0),  # the components' half-t
                "half_t_scale": np.asarray(math.sqrt(self.spread_var)),  # A
                **_nu_bounds(priors),
                "per_system": np.asarray(0.0),
                "components": np.asarray(1.0),
            }
        if fixed:
            prior = {"spread_var": np.asarray(self.spread_var)}
        else:
            half_t_df = nu_u - d + 1.0
            prior = {"spread_rate": np.asarray(1.0 / (2.0 * half_t_df * self.spread_var))}
        return {
            "means": self.means,
            "transform": transform,
            "power": power,
            "const": np.asarray(float(likelihood.sum() + jacobian + spread)),
            "effect_hi": np.asarray(self.effect_hi),
            "spread_df": np.asarray(nu_u),
            **prior,
            **_nu_bounds(priors),
            "per_system": np.asarray(float(self.tails == "per-system")),
        }


def _mixture_const(power: np.ndarray, d: int) -> float:
    r"""Return the constants of the noise likelihood as a Gaussian scale mixture.

    With independent components each data set's deviations are integrated out given one
    noise weight (``docs/joint_prior.md``, the marginal form): :math:`(1 +
    |\eta|^2/(2P))^{-P}` is :math:`(2\pi P)^{d/2}\,\Gamma(P - d/2)/\Gamma(P)` times the
    mixture's density; summed over the data sets (`power` the :math:`P_i`).
    """
    terms = (
        0.5 * d * np.log(2.0 * math.pi * power)
        + special.gammaln(power - 0.5 * d)
        - special.gammaln(power)
    )
    return float(terms.sum())


def _nu_bounds(priors: JointPriors) -> dict[str, np.ndarray]:
    """Return the bounds of nu's hyper-priors as the model's data."""
    return {
        "alpha_lo": np.asarray(priors.alpha_lower),
        "alpha_hi": np.asarray(priors.alpha_upper),
        "beta_lo": np.asarray(priors.beta_lower),
        "beta_hi": np.asarray(priors.beta_upper),
    }


def robust_pair_spread(mean_scores: np.ndarray) -> float:
    """Return a robust spread of the pairs' per-data-set mean differences (score units).

    For each pair of systems (a, b), 1.4826 times the median absolute deviation of
    ``mean_scores[:, a] - mean_scores[:, b]`` over the data sets (a normal's standard
    deviation where the differences are normal; one outlying data set does not move
    it), averaged over the pairs. Where that is 0 (most data sets have the same
    difference), the mean over the pairs of their standard deviation instead.

    Parameters
    ----------
    mean_scores : numpy.ndarray
        ``(q, K)`` each system's mean score on each data set.

    Examples
    --------
    >>> m = np.array([[0.0, 0.1], [0.0, 0.2], [0.0, 0.3], [0.0, 9.0]])
    >>> round(robust_pair_spread(m), 4)  # the outlier 9.0 barely counts
    0.1483
    """
    a, b = np.triu_indices(mean_scores.shape[1], 1)
    diffs = mean_scores[:, a] - mean_scores[:, b]  # (q, pairs)
    mad = np.median(np.abs(diffs - np.median(diffs, axis=0)), axis=0)
    spread = MAD_TO_SD * float(mad.mean())
    if spread == 0.0:
        spread = float(diffs.std(axis=0).mean())
    return spread


def _paired_with_first(
    table: ScoreTable, systems: tuple[str, ...], metric: str
) -> tuple[list[Any], np.ndarray]:
    """Return the first system paired with each other one, and the scores per data set.

    Pairing checks the names and keys and orients the differences; raises unless there
    are at least 2 data sets and 2 scores per system on each.
    """
    pairs = [table.paired(systems[0], s, metric=metric) for s in systems[1:]]
    first = pairs[0]
    q = first.n_datasets
    if q < 2:
        raise InputError(
            f"The joint model needs scores on at least 2 data sets, got {q}; for one data "
            "set compare the pairs with the Bayesian correlated t-test."
        )
    n = np.array([d.size for d in first.differences], dtype=float)
    if np.any(n < 2):
        bad = [ds for ds, m in zip(first.datasets, n, strict=True) if m < 2]
        raise InputError(
            f"Data set(s) {', '.join(map(repr, bad[:5]))} have a single score per system; the "
            "joint model needs at least 2 per system and data set."
        )
    return pairs, n


def _contrast_statistics(
    pairs: list[Any], n: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray, np.ndarray]:
    """Per data set, the contrasts' fold means and cross-products, and every pair's spread.

    `pairs` are the first system paired with each other one. Returns ``(means, cross,
    null, sds, most)``: ``(q, d)`` and ``(q, d, d)`` in orthonormal contrast coordinates;
    per data set a ``(d, m)`` orthonormal basis of the directions in which its contrasts
    do not vary (:func:`_null_directions`); ``(q, pairs)`` the population sd and the
    largest absolute value of every pair's fold differences.
    """
    k = len(pairs) + 1
    basis = contrast_basis(k)
    upper = np.triu_indices(k, 1)
    means, cross, null, pair_sd, pair_max = [], [], [], [], []
    for i in range(len(n)):
        # minus the differences x_0 - x_k (oriented) are the oriented scores up to a fold
        # effect; the contrasts H^T y do not see it
        y = -np.vstack([np.zeros(int(n[i])), *(p.differences[i] for p in pairs)])
        diffs = y[upper[0]] - y[upper[1]]  # (pairs, n): every pair's fold differences
        z = basis.T @ y  # (d, n) the orthonormal contrasts
        _, mean, r = sufficient_statistics(z)
        means.append(mean)
        cross.append(r)
        null.append(_null_directions(z - mean[:, None], float(np.abs(diffs).max())))
        pair_sd.append(diffs.std(axis=1))  # population sd, as the reference code
        pair_max.append(np.abs(diffs).max(axis=1))
    return np.array(means), np.array(cross), null, np.array(pair_sd), np.array(pair_max)


def _null_directions(deviations: np.ndarray, largest: float) -> np.ndarray:
    """Return a ``(d, m)`` orthonormal basis of the directions in which nothing varies.

    `deviations` ``(d, n)``: one data set's contrasts minus their fold means; `largest`:
    its largest absolute difference of two systems on a fold. A direction counts when a
    pair's difference along it (sqrt(2) x the unit contrast) has a population sd at most
    the pairwise model's ``ZERO_VARIANCE_RTOL`` x `largest` (the pairwise rule at K = 2).
    The singular values of the deviations, not the eigenvalues of their cross-products,
    decide (relative accuracy of the machine epsilon, not of its square root). With fewer
    folds than contrasts (n - 1 < d) every data set lacks d - n + 1 directions whatever
    its scores: no direction counts there (the noise prior keeps the posterior proper).
    """
    d, n = deviations.shape
    if n - 1 < d:
        return np.zeros((d, 0))
    u, s, _ = np.linalg.svd(deviations, full_matrices=True)
    sd = np.zeros(d)
    sd[: s.size] = math.sqrt(2.0 / n) * s
    return u[:, sd <= ZERO_VARIANCE_RTOL * largest]


def _zero_variance_floor(
    cross: np.ndarray,
    null: list[np.ndarray],
    n: np.ndarray,
    sds: np.ndarray,
    most: np.ndarray,
    rope: float,
) -> tuple[np.ndarray, np.ndarray, float | None]:
    r"""Return the cross-products and pairs' sds with the zero-variance floor, and its sd.

    The pairwise model gives a data set whose differences do not vary the per-fold
    variance :math:`f^2` of U(-rope, rope) noise, :math:`f^2 = \text{rope}^2/3`
    (rope 0: :data:`~isbetter.cv.hierarchical.spec.ZERO_VARIANCE_FLOOR` x the mean sd of
    the pairs that vary), its mean kept. A pair's difference is sqrt(2) x a unit
    contrast, so the unit contrasts of the directions in `null` get :math:`f^2 / 2` per
    fold, isotropically: :math:`R_i + n_i (f^2/2) N_i N_i^T`. At K = 2 that is the
    pairwise model's :math:`SS_i = n_i f^2` of the difference; any pair of systems whose
    difference lies in the null space gets :math:`f^2`, whatever the order of the systems
    and the contrasts.
    """
    if not any(b.shape[1] for b in null):
        return cross, sds, None
    varying = sds > ZERO_VARIANCE_RTOL * most  # the pairwise rule, per data set and pair
    floor = zero_variance_sd(sds[varying], float(most.max()), rope)
    if floor is None:  # every difference 0: prepare has refused the table already
        return cross, sds, None
    floored = cross + np.array(
        [n_i * floor**2 / 2.0 * (b @ b.T) for n_i, b in zip(n, null, strict=True)]
    )
    k = cross.shape[1] + 1
    basis = contrast_basis(k)
    a, c = np.triu_indices(k, 1)
    g = basis[a] - basis[c]  # (pairs, d): a pair's difference in contrast coordinates
    pair_var = np.einsum("pj,ijl,pl->ip", g, floored, g) / n[:, None]
    hit = np.array([b.shape[1] > 0 for b in null])
    floored_sds = np.where(hit[:, None], np.sqrt(np.maximum(pair_var, 0.0)), sds)
    return floored, floored_sds, floor


def prepare(
    table: ScoreTable,
    systems: Sequence[str],
    *,
    metric: str | None = None,
    rope: float = 0.0,
    rho: float | None = None,
    priors: JointPriors | None = None,
) -> JointData:
    """Check the scores of `systems` and return their sufficient statistics and bounds.

    Parameters
    ----------
    table : ScoreTable
        Per-fold scores (:func:`~isbetter.read_scores`).
    systems : sequence of str
        At least two systems of `table`.
    metric : str, optional
        Metric column; default: the first.
    rope : float, default: 0.0
        ROPE half-width in score units: the directions in which a data set's contrasts
        do not vary get the noise of U(-rope, rope) differences, as the pairwise model's
        zero-variance data sets (:func:`_zero_variance_floor`).
    rho : float, optional
        Correlation of the scores within a data set; default ``1 / folds``.
    priors : JointPriors, optional
        Prior settings; default: the reference values.

    Returns
    -------
    JointData
    """
    systems, priors = _checked(table, systems, priors)
    metric = table._metric(metric)
    pairs, n = _paired_with_first(table, systems, metric)
    first = pairs[0]
    rho_arr = resolve_rho(rho, first.n_folds, first.datasets)
    k = len(systems)
    means, cross, null, sds, most = _contrast_statistics(pairs, n)
    if float(most.max()) == 0.0:
        raise InputError(
            f"The systems {', '.join(map(repr, systems))} have the same {metric!r} on every "
            "fold of every data set: there is nothing to rank."
        )
    cross, sds, floor = _zero_variance_floor(cross, null, n, sds, most, rope)
    scale = float(sds.mean()) or float(most.max())
    # scale-equivariance, as the pairwise model: dividing the scores and every
    # data-dependent setting by one constant leaves the posterior in score units unchanged
    means_s = np.array(means) / scale
    cross_s = np.array(cross) / scale**2
    d = k - 1
    per_fold = float(np.mean(np.trace(cross_s, axis1=1, axis2=2) / (d * n)))
    means_arr = np.column_stack([first.means_a, *(p.means_b for p in pairs)])
    if priors.spread_prior == "inverse-wishart":
        spread_df, spread_var, per_fold = _fixed_spread(priors, means_s, per_fold)
    else:
        spread_df, spread_var, per_fold = _half_t_spread(priors, means_arr, scale, per_fold)
    return JointData(
        systems=systems,
        datasets=tuple(first.datasets),
        metric=metric,
        higher_is_better=first.higher_is_better,
        scale=scale,
        n=n,
        rho=rho_arr,
        means=means_s,
        cross=cross_s,
        mean_scores=means_arr,
        effect_hi=priors.delta0_bound * math.sqrt(k) * float(most.max()) / scale,
        spread_prior=priors.spread_prior,
        spread_df=spread_df,
        spread_var=spread_var,
        noise_df=d + priors.noise_df,
        noise_var=priors.noise_scale * per_fold,
        tails=priors.tails,
        zero_variance=tuple(ds for ds, b in zip(first.datasets, null, strict=True) if b.shape[1]),
        zero_variance_sd=floor,
    )


def _checked(
    table: Any, systems: Sequence[str], priors: JointPriors | None
) -> tuple[tuple[str, ...], JointPriors]:
    """Return :func:`prepare`'s systems and priors, checked (raises on bad input)."""
    if not isinstance(table, ScoreTable):
        raise InputTypeError(
            f"`table` must be a ScoreTable (isbetter.read_scores), got {type(table).__name__}."
        )
    priors = JointPriors() if priors is None else priors
    if not isinstance(priors, JointPriors):
        raise InputTypeError(f"`priors` must be JointPriors or None, got {type(priors).__name__}.")
    systems = tuple(systems)
    if len(systems) < 2 or len(set(systems)) != len(systems):
        raise InputError(f"`systems` must name at least 2 different systems, got {systems!r}.")
    return systems, priors


def _fixed_spread(
    priors: JointPriors, means: np.ndarray, per_fold: float
) -> tuple[float, float, float]:
    """Return the inverse-Wishart's degrees of freedom and psi; the noise's mean variance.

    psi is ``spread_scale`` times the variance of a contrast's mean across the data
    sets (``means``: ``(q, d)``, scaled), averaged over the contrasts.
    """
    d = means.shape[1]
    between = float(np.sum(np.var(means, axis=0)) / d)  # a contrast's mean, across data sets
    if per_fold == 0.0:  # no contrast varies on any fold: the scale of the means instead
        per_fold = between
    if between == 0.0:  # every data set alike: the noise's scale instead
        between = per_fold
    return d + priors.spread_df, priors.spread_scale * between, per_fold


def _half_t_spread(
    priors: JointPriors, mean_scores: np.ndarray, scale: float, per_fold: float
) -> tuple[float, float, float]:
    """Return Huang and Wand's IW degrees of freedom and A^2; the noise's mean variance.

    A pair's half-t scale, sqrt(2) A, is ``spread_scale`` times the robust spread of the
    pairs' mean differences (``mean_scores``: ``(q, K)``, in score units; ``scale``
    converts them).
    """
    d = mean_scores.shape[1] - 1
    between = robust_pair_spread(mean_scores) / scale  # a pair's; a contrast's is 1/sqrt(2) of it
    if per_fold == 0.0:  # no contrast varies on any fold: the scale of the means instead
        per_fold = between**2
    if between == 0.0:  # every data set alike: the noise's scale instead
        between = math.sqrt(per_fold)
    if between == 0.0:  # the same differences on every fold of every data set
        between, per_fold = 1.0, 1.0  # the scale: the largest difference
    return priors.spread_df + d - 1.0, (priors.spread_scale * between) ** 2 / 2.0, per_fold
