r"""The hierarchical model's data: checked scores to scaled sufficient statistics.

The per-fold differences of data set :math:`i` are :math:`MVN(\delta_i 1, \sigma_i^2
M)` with compound symmetry :math:`M = (1 - \rho) I + \rho 11^T` [1]_ [2]_, so the
density depends on the data only through :math:`(n, \bar x, SS)`: O(1) per data set
instead of O(n^2). With :math:`\sigma_i \sim U(0, \bar\sigma)` integrated out in
closed form,

.. math::

    p(x_i \mid \delta_i) = \frac{\Gamma(a)\, Q(a, \frac{S}{2\bar\sigma^2})}
    {2 \bar\sigma (2\pi)^{n/2} (\det M)^{1/2} (S/2)^{a}},
    \quad a = \frac{n-1}{2}, \quad S = \frac{SS}{1 - \rho} +
    \frac{n (\bar x - \delta_i)^2}{1 + (n - 1)\rho},

:math:`Q` the regularised upper incomplete gamma function.
:meth:`Prepared.model_data` computes its data-only parts once per fit; the log
density itself is written once, in the compiled backend
(:mod:`.compiled_backend`, :mod:`.numerics.kernels`), and in PyTensor where the PyMC
backend needs it (:mod:`.pymc_backend`); ``tests/cv/_oracle.py`` holds the NumPy
reference both are tested against.

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] C. Nadeau, Y. Bengio (2003). Inference for the generalization error.
   *Machine Learning* 52, 239-281.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from isbetter.core.errors import InputError, InputTypeError
from isbetter.cv.correlation import resolve_rho
from isbetter.cv.hierarchical.priors import HierarchicalPriors
from isbetter.cv.scores import PairedScores


def sufficient_statistics(
    differences: tuple[np.ndarray, ...] | list[np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(n, mean, ss)`` per data set: count, mean and within sum of squares.

    Parameters
    ----------
    differences : sequence of numpy.ndarray
        One 1-D array of differences per data set.

    Returns
    -------
    n, mean, ss : numpy.ndarray
        ``ss[i] = sum((x_i - mean(x_i))**2)``.

    Examples
    --------
    >>> n, m, ss = sufficient_statistics([np.array([1.0, 2.0, 3.0])])
    >>> n, m, ss
    (array([3.]), array([2.]), array([2.]))
    """
    n = np.array([d.size for d in differences], dtype=float)
    mean = np.array([d.mean() for d in differences])
    ss = np.array([((d - d.mean()) ** 2).sum() for d in differences])
    return n, mean, ss


def _quadratic_form(mean: Any, ss: Any, n: Any, rho: Any, delta: Any) -> Any:
    r"""Return :math:`(x - \delta 1)^T M^{-1} (x - \delta 1)` from sufficient statistics.

    With :math:`M = (1-\rho)I + \rho 11^T`, :math:`M^{-1} = (I - c 11^T)/(1-\rho)`,
    :math:`c = \rho/(1 + (n-1)\rho)` [1]_ [2]_, the form is
    :math:`SS/(1-\rho) + n(\bar x - \delta)^2/(1 + (n-1)\rho)`.
    """
    return ss / (1 - rho) + n * (mean - delta) ** 2 / (1 + (n - 1) * rho)


#: a data set counts as having zero variance when its sd is below this fraction of its
#: largest absolute difference (round-off of equal differences), or exactly zero.
ZERO_VARIANCE_RTOL = 1e-9
#: With rope 0, a zero-variance data set gets this fraction of the other data sets' mean sd
#: (of its largest absolute difference where every data set has zero variance). Its value
#: is immaterial where it is small: the data set's likelihood in delta_i is a kernel of
#: width proportional to it at the observed mean, so as it goes to 0 the posterior tends
#: to that of delta_i = the observed mean exactly, and departs from that limit as its
#: square (tests/cv/test_hierarchical.py::test_rope0_zero_variance_floor_is_immaterial: from
#: 0.1% to 3% the probabilities move by < 1e-4, at 10% by < 1e-3, at 100% by up to 0.15).
#: Smaller buys nothing measurable and makes that delta_i's posterior narrower still
#: against the others', which the centred parameterisation samples in the same chains.
ZERO_VARIANCE_FLOOR = 0.01
#: The factor Q(a, S / (2 sigma_upper^2)) that sigma_i's prior bound puts into the marginal
#: likelihood (the module's docstring) is dropped from the model when its log is above
#: -BOUND_TERM_TOL for every data set and every delta_i within 2 x the delta0 bound of the
#: data set's mean (true for the reference priors unless a data set has very few scores);
#: it makes the likelihood ~30% cheaper. Otherwise the exact likelihood (a separately
#: compiled model) is used.
BOUND_TERM_TOL = 1e-9


# --------------------------------------------------------------------------- data preparation
@dataclass(frozen=True)
class Prepared:
    """Scaled sufficient statistics and prior bounds for one fit."""

    scale: float
    n: np.ndarray
    mean: np.ndarray
    ss: np.ndarray
    rho: np.ndarray
    delta0_hi: float
    std0_hi: float
    std_hi: float
    zero_variance: tuple[str, ...]
    zero_variance_sd: float | None
    bounded: bool

    def model_data(self, priors: HierarchicalPriors) -> dict[str, Any]:
        """Return the values of the model's ``pm.Data`` containers for this fit."""
        # the likelihood's data-only parts are computed here once, not at every gradient:
        # per data set, log p(x_i | delta_i) = c_i - a_i log((ssr_i + w_i (xbar_i - delta_i)^2) / 2)
        # (+ the bound factor), see the module's docstring
        n, rho = self.n, self.rho
        a = (n - 1) / 2
        log_det_m = (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)
        const = (
            -np.log(self.std_hi)
            - 0.5 * n * math.log(2 * math.pi)
            - 0.5 * log_det_m
            - math.log(2.0)
            + special.gammaln(a)
        )
        return {
            "a": a,
            "w": n / (1 + (n - 1) * rho),
            "ssr": self.ss / (1 - rho),
            "xbar": self.mean,
            "const": np.asarray(float(const.sum())),
            "delta0_hi": np.asarray(self.delta0_hi),
            "std0_hi": np.asarray(self.std0_hi),
            "std_hi": np.asarray(self.std_hi),
            "alpha_lo": np.asarray(priors.alpha_lower),
            "alpha_hi": np.asarray(priors.alpha_upper),
            "beta_lo": np.asarray(priors.beta_lower),
            "beta_hi": np.asarray(priors.beta_upper),
        }


def prepare(
    scores: PairedScores, rope: float, rho: float | None, priors: HierarchicalPriors
) -> Prepared:
    """Check the scores and return the scaled sufficient statistics and prior bounds."""
    if not isinstance(scores, PairedScores):
        raise InputTypeError(
            "`scores` must be PairedScores, e.g. `read_scores(...).paired('A', 'B')`, got "
            f"{type(scores).__name__}."
        )
    q = scores.n_datasets
    if q < 2:
        raise InputError(
            f"The hierarchical model needs scores on at least 2 data sets, got {q}; for one "
            "data set use the Bayesian correlated t-test (method='correlated_t')."
        )
    rho_arr = resolve_rho(rho, scores.n_folds, scores.datasets)
    diffs = [np.asarray(d, dtype=float) for d in scores.differences]
    n, mean, ss = sufficient_statistics(diffs)
    if np.any(n < 2):
        bad = [ds for ds, k in zip(scores.datasets, n, strict=True) if k < 2]
        raise InputError(
            f"Data set(s) {', '.join(map(repr, bad[:5]))} have a single score; the "
            "hierarchical model needs at least 2 scores per data set. Use the Bayesian sign "
            "or signed-rank test on the per-data-set means instead."
        )
    sds = np.sqrt(ss / n)  # population sd, as in the reference code
    max_abs = np.array([np.abs(d).max() for d in diffs])
    zero = sds <= ZERO_VARIANCE_RTOL * max_abs
    floor: float | None = None
    if zero.any():
        floor = _zero_variance_sd(scores, sds[~zero], max_abs, rope)
        sds = np.where(zero, floor, sds)
        ss = np.where(zero, n * floor**2, ss)
    scale = float(np.mean(np.sqrt(ss / n)))  # mean per-data-set sd (after the floor)
    # Scale-equivariance: dividing the data, the ROPE and every data-dependent bound by the
    # same constant leaves the posterior (in score units) unchanged; it only helps numerics.
    mean_s, ss_s, sds_s = mean / scale, ss / scale**2, sds / scale
    sd_means = float(np.std(mean_s))
    if sd_means == 0.0:  # all data-set means equal: fall back to the within-data-set scale
        sd_means = float(sds_s.mean())
    max_abs_s = max(float(max_abs.max()) / scale, float(sds_s.max()))
    delta0_hi = priors.delta0_bound * max_abs_s
    std_hi = priors.std_upper * float(sds_s.mean())
    bound_term = _bound_term(mean_s, ss_s, n, rho_arr, delta0_hi, std_hi)
    return Prepared(
        scale=scale,
        n=n,
        mean=mean_s,
        ss=ss_s,
        rho=rho_arr,
        delta0_hi=delta0_hi,
        std0_hi=priors.std0_upper * sd_means,
        std_hi=std_hi,
        zero_variance=tuple(ds for ds, z in zip(scores.datasets, zero, strict=True) if z),
        zero_variance_sd=floor,
        bounded=not bool(np.max(bound_term) < BOUND_TERM_TOL),
    )


def _zero_variance_sd(
    scores: PairedScores, positive: np.ndarray, max_abs: np.ndarray, rope: float
) -> float:
    """Return the sd given to data sets whose differences are all equal (zero variance)."""
    # The likelihood of constant differences is unbounded as sigma_i -> 0 (an improper
    # posterior). The reference code (R, and baycomp) replaces them by U(-rope, rope)
    # noise, whose variance is rope^2 / 3; we give such a data set that variance
    # deterministically and keep its observed mean. With rope 0 that is no variance:
    # ZERO_VARIANCE_FLOOR instead (`positive`: the sds of the other data sets).
    floor = zero_variance_sd(positive, float(max_abs.max()), rope)
    if floor is not None:
        return floor
    # every difference is exactly 0: no scale in the data, take one from the scores
    magnitude = np.concatenate([np.abs(scores.means_a), np.abs(scores.means_b)])
    return 1e-6 * max(1.0, float(magnitude.max()))


def zero_variance_sd(positive: np.ndarray, largest: float, rope: float) -> float | None:
    """Return the sd of the differences of a zero-variance data set (None: no scale).

    ``rope / sqrt(3)``, the sd of U(-rope, rope) noise (the reference code's rule); with
    rope 0, :data:`ZERO_VARIANCE_FLOOR` times the mean of `positive` (the sds of the data
    sets that vary) or, where none varies, of `largest` (the largest absolute difference).
    The pairwise model applies it to a data set's differences, the joint model to each
    pair's (``docs/joint_prior.md``).

    Examples
    --------
    >>> round(zero_variance_sd(np.array([0.02, 0.04]), 0.1, rope=0.0), 6)
    0.0003
    >>> round(zero_variance_sd(np.array([0.02]), 0.1, rope=0.01), 6)
    0.005774
    """
    if rope > 0:
        return rope / math.sqrt(3.0)
    if positive.size:
        return ZERO_VARIANCE_FLOOR * float(positive.mean())
    if largest > 0:
        return ZERO_VARIANCE_FLOOR * largest
    return None


def _bound_term(
    mean: np.ndarray, ss: np.ndarray, n: np.ndarray, rho: np.ndarray, delta0_hi: float,
    std_hi: float,
) -> np.ndarray:  # fmt: skip
    """Return -log of sigma_i's bound factor at the farthest plausible delta_i, per data set."""
    reach = np.abs(mean) + 2 * delta0_hi
    quad = _quadratic_form(mean, ss, n, rho, mean + reach)
    with np.errstate(divide="ignore"):
        return -np.log(special.gammaincc((n - 1) / 2, quad / (2 * std_hi**2)))
