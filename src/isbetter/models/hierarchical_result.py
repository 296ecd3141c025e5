"""Result of the hierarchical model: posterior of the next data set, diagnostics.

Each posterior draw of (nu, delta0, sigma0) gives a Student-t for the difference
on the next data set; the decision probabilities count the region with the
largest mass per draw (Corani et al. 2017; see :mod:`isbetter.models.hierarchical`),
the predictive ones average the masses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from isbetter._validate import check_rope
from isbetter.decision import ComparisonResult, Probabilities, probabilities_from_masses
from isbetter.posterior import Counting

#: convergence thresholds (Vehtari et al. 2021, "Rank-normalization, folding, and
#: localization"): R-hat <= 1.01 and at least 100 effective draws per chain.
R_HAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100
#: variables whose diagnostics are checked (the ones the result reports)
_DIAGNOSED = ("delta0", "std0", "nu", "delta")


@dataclass(frozen=True)
class HierarchicalPosterior:
    r"""Posterior of the next data set's difference, :math:`t_\nu(\delta_0, \sigma_0)`.

    Attributes
    ----------
    delta0, std0, nu : numpy.ndarray
        Posterior draws (score units for ``delta0`` and ``std0``), one per draw.
    counting : {"argmax"}
        Probabilities are the fraction of draws in which a region holds the
        largest mass of :math:`\delta_{next}` (Corani et al. 2017; baycomp).
    """

    delta0: np.ndarray = field(repr=False)
    std0: np.ndarray = field(repr=False)
    nu: np.ndarray = field(repr=False)
    counting: Counting = field(default="argmax", init=False)

    def region_masses(self, rope: float) -> np.ndarray:
        """Student-t masses of (A better, ROPE, B better) per draw, shape ``(n_draws, 3)``."""
        rope = check_rope(rope)
        above = stats.t.sf(rope, self.nu, loc=self.delta0, scale=self.std0)
        below = stats.t.cdf(-rope, self.nu, loc=self.delta0, scale=self.std0)
        return np.column_stack([above, np.clip(1.0 - above - below, 0.0, 1.0), below])

    def next_pdf(self, grid: np.ndarray) -> np.ndarray:
        r"""Posterior predictive density of :math:`\delta_{next}` on `grid` (draw average)."""
        grid = np.asarray(grid, dtype=float)
        dens = np.zeros_like(grid)
        for start in range(0, self.nu.size, 1000):  # chunks bound the memory use
            sl = slice(start, start + 1000)
            dens += stats.t.pdf(
                grid[:, None], self.nu[sl], loc=self.delta0[sl], scale=self.std0[sl]
            ).sum(axis=1)
        return dens / self.nu.size


@dataclass(frozen=True)
class HierarchicalDiagnostics:
    """MCMC convergence diagnostics of a hierarchical fit.

    Attributes
    ----------
    r_hat_max : float
        Largest rank-normalised split R-hat over ``delta0, std0, nu`` and every
        ``delta`` (NaN with a single chain).
    ess_bulk_min, ess_tail_min : float
        Smallest bulk / tail effective sample size over the same variables.
    divergences : int
        Number of divergent transitions after tuning.
    converged : bool
        ``r_hat_max <= 1.01``, ``ess_bulk_min`` and ``ess_tail_min`` at least 100
        per chain, and no divergences.
    """

    r_hat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary."""
        return {
            "r_hat_max": self.r_hat_max,
            "ess_bulk_min": self.ess_bulk_min,
            "ess_tail_min": self.ess_tail_min,
            "divergences": self.divergences,
            "converged": self.converged,
        }


@dataclass(frozen=True)
class HierarchicalResult(ComparisonResult):
    r"""Result of the hierarchical comparison of two systems over many data sets.

    The inherited ``p_a_better, p_rope, p_b_better`` are **argmax counts**: the
    fraction of posterior draws in which each region holds the largest mass of
    :math:`\delta_{next}` (Corani et al. 2017; Szymański & Gorman 2020; baycomp).
    :attr:`predictive` holds the **predictive probabilities**
    :math:`P(\delta_{next} \in \text{region})`, the mean masses.

    Attributes
    ----------
    predictive : Probabilities
        Posterior predictive probabilities of the three regions for a new data set.
    diagnostics : HierarchicalDiagnostics
        R-hat, effective sample sizes, divergences and a ``converged`` flag.
    datasets : tuple of str
        Data set names, in the column order of :attr:`delta`.
    delta : numpy.ndarray
        Shape ``(n_draws, n_datasets)``: draws of each data set's mean difference
        :math:`\delta_i` (score units; the shrinkage estimates).
    observed_means : numpy.ndarray
        Observed mean difference of each data set (before shrinkage).
    delta0, std0, nu : numpy.ndarray
        Draws of the population mean and scale of the differences (score units)
        and of the degrees of freedom.
    idata : arviz.InferenceData
        The full PyMC/ArviZ output (``delta0, std0, delta`` in score units;
        ``z`` in scaled units).
    """

    predictive: Probabilities | None = None
    diagnostics: HierarchicalDiagnostics | None = None
    datasets: tuple[str, ...] = ()
    delta: np.ndarray | None = field(default=None, repr=False, compare=False)
    observed_means: np.ndarray | None = field(default=None, repr=False, compare=False)
    delta0: np.ndarray | None = field(default=None, repr=False, compare=False)
    std0: np.ndarray | None = field(default=None, repr=False, compare=False)
    nu: np.ndarray | None = field(default=None, repr=False, compare=False)
    idata: Any = field(default=None, repr=False, compare=False)

    def predictive_probabilities(self, rope: float | None = None) -> Probabilities:
        """Predictive probabilities (mean masses) for another ROPE, without refitting.

        Parameters
        ----------
        rope : float, optional
            ROPE half-width in score units; default: the ROPE of the fit.
        """
        if rope is None and self.predictive is not None:
            return self.predictive
        masses = self.posterior.region_masses(self.rope if rope is None else rope)
        return probabilities_from_masses(masses, "mean")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary, with ``predictive`` and ``diagnostics`` added."""
        out = super().to_dict()
        out["predictive"] = None if self.predictive is None else self.predictive.to_dict()
        out["diagnostics"] = None if self.diagnostics is None else self.diagnostics.to_dict()
        return out


def _nan_extreme(values: np.ndarray, fn: Any) -> float:
    finite = values[~np.isnan(values)]
    return float(fn(finite)) if finite.size else float("nan")


def _diagnose(idata: Any, chains: int) -> HierarchicalDiagnostics:
    # ArviZ's estimators, vectorised over the variables (ArviZ loops over them in Python,
    # seconds for a thousand data sets); tests/test_hierarchical.py checks the agreement
    from isbetter.models import _mcmc_diagnostics as mcmc

    post = idata.posterior
    columns = [post[v].to_numpy() for v in _DIAGNOSED]
    x = np.concatenate([c.reshape(c.shape[0], c.shape[1], -1) for c in columns], axis=2)
    if x.shape[1] < 4:  # too few draws for any estimate
        r_hat_max = ess_bulk_min = ess_tail_min = float("nan")
    else:
        r_hat_max = _nan_extreme(mcmc.rhat_rank(x), np.max) if chains > 1 else float("nan")
        ess_bulk_min = _nan_extreme(mcmc.ess_bulk(x), np.min)
        ess_tail_min = _nan_extreme(mcmc.ess_tail(x), np.min)
    divergences = int(idata.sample_stats["diverging"].to_numpy().sum())
    converged = (
        (math.isnan(r_hat_max) or r_hat_max <= R_HAT_MAX)
        and ess_bulk_min >= ESS_PER_CHAIN_MIN * chains  # False when NaN
        and ess_tail_min >= ESS_PER_CHAIN_MIN * chains
        and divergences == 0
    )
    return HierarchicalDiagnostics(
        r_hat_max=r_hat_max,
        ess_bulk_min=ess_bulk_min,
        ess_tail_min=ess_tail_min,
        divergences=divergences,
        converged=bool(converged),
    )
