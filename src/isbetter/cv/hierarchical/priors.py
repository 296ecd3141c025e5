"""Prior settings of the hierarchical correlated-t model, as a frozen, documented object.

The defaults are those of the reference implementation of Corani et al. (2017)
(``hierarchical/hierarchical_test.R`` of ``BayesianTestsML/tutorial``) and of
baycomp's ``HierarchicalTest`` [2]_, which reproduce the published numbers. Every
bound is settable; the data-dependent bounds are given as factors of statistics
of the (scaled) differences, exactly as in the reference code.

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] J. Demšar et al., baycomp 1.0.3, ``baycomp/multiple.py``
   (``HierarchicalTest``) and ``hierarchical-t-test.stan``.
"""

from __future__ import annotations

from dataclasses import dataclass

from isbetter.inference.prior_settings import PositivePriors

__all__ = ["HierarchicalPriors", "PositivePriors"]


@dataclass(frozen=True)
class HierarchicalPriors(PositivePriors):
    r"""Priors of the hierarchical correlated-t model (Corani et al. 2017).

    With :math:`x_i` the (scaled) differences of data set :math:`i`,
    :math:`s_i` their population standard deviation and :math:`\bar x_i` their
    mean, the model's priors are

    .. math::

        \delta_0 &\sim U(-b_\delta \max_{i,j}|x_{ij}|,\; b_\delta \max_{i,j}|x_{ij}|) \\
        \sigma_0 &\sim U(0,\; b_0 \operatorname{sd}(\bar x_1, \dots, \bar x_q)) \\
        \sigma_i &\sim U(0,\; \bar\sigma), \quad \bar\sigma = b_\sigma \operatorname{mean}(s_i) \\
        \nu - 1 &\sim \operatorname{Gamma}(\alpha, \beta) \ \text{(rate } \beta), \quad
        \alpha \sim U(\alpha_l, \alpha_u), \ \beta \sim U(\beta_l, \beta_u)

    The defaults are the reference implementation's (see [1]_, section 3, and
    [2]_), which reproduce the published probabilities.

    Attributes
    ----------
    alpha_lower, alpha_upper : float, default: 1.0, 2.0
        Bounds of the uniform prior on the shape :math:`\alpha` of the Gamma
        prior on :math:`\nu - 1` ([1]_ section 3.1; ``lower_alpha``/``upper_alpha``
        in baycomp).
    beta_lower, beta_upper : float, default: 0.01, 0.1
        Bounds of the uniform prior on the rate :math:`\beta` of that Gamma
        prior ([1]_; ``lower_beta``/``upper_beta`` in baycomp).
    std_upper : float, default: 1000.0
        :math:`b_\sigma`: the upper bound of each data set's :math:`\sigma_i` is
        this factor times the mean per-data-set standard deviation
        (``std_upper_bound`` in the R code, ``upper_sigma`` in baycomp).
    std0_upper : float, default: 1000.0
        :math:`b_0`: the upper bound of :math:`\sigma_0` is this factor times the
        standard deviation of the per-data-set means (the R code and baycomp
        use the same factor as for :math:`\sigma_i`).
    delta0_bound : float, default: 1.0
        :math:`b_\delta`: :math:`\delta_0` is uniform on plus/minus this factor
        times the largest absolute difference ([1]_; baycomp ``deltaLow/deltaHi``).

    References
    ----------
    .. [1] Corani et al. (2017), *Machine Learning* 106, 1817-1837.
    .. [2] baycomp 1.0.3, ``HierarchicalTest`` and ``hierarchical-t-test.stan``.

    Examples
    --------
    >>> HierarchicalPriors().std_upper
    1000.0
    >>> HierarchicalPriors(alpha_upper=3.0).to_dict()["alpha_upper"]
    3.0
    """

    alpha_lower: float = 1.0
    alpha_upper: float = 2.0
    beta_lower: float = 0.01
    beta_upper: float = 0.1
    std_upper: float = 1000.0
    std0_upper: float = 1000.0
    delta0_bound: float = 1.0
