r"""The result of the hierarchical paired comparison of two models over subtasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from isbetter.inference.decisions import probabilities_from_masses
from isbetter.inference.records import Probabilities
from isbetter.results.comparison import ComparisonResult

__all__ = ["ItemsHierarchicalResult"]

#: the per-subtask counts, in the columns of :attr:`ItemsHierarchicalResult.counts`
COUNTS = ("n11", "n10", "n01", "n00")


@dataclass(frozen=True)
class ItemsHierarchicalResult(ComparisonResult):
    r"""Result of a hierarchical comparison of two models' items over many subtasks.

    Binary items: the hierarchical paired model (``method`` ``"items_hierarchical"``).
    Graded items: the hierarchical correlated-t model with :math:`\rho = 0`
    (``"items_hierarchical_graded"``, :mod:`isbetter.items.graded`), whose
    :math:`\delta_{next}` is the Student-t of DESIGN §3.2; it has no :attr:`counts`,
    and :attr:`observed_means` and :attr:`units` instead.

    The inherited ``p_a_better, p_rope, p_b_better`` are **argmax counts** over the
    posterior draws of the masses of the next subtask's difference
    :math:`\delta_{next} = \phi_{new}(2 s_{new} - 1)` in the three regions, as the
    hierarchical model of per-fold scores (DESIGN §3.2); :attr:`predictive` holds the
    **predictive probabilities** :math:`P(\delta_{next} \in \text{region})`.
    :attr:`estimate` summarises the **population mean difference** (:attr:`population_mean`).

    Attributes
    ----------
    subtasks : tuple of str
        Subtask names, in the column order of :attr:`delta`.
    counts : numpy.ndarray or None
        Shape ``(n_subtasks, 4)``: ``n11, n10, n01, n00`` of each subtask (binary items).
    delta : numpy.ndarray
        Shape ``(n_draws, n_subtasks)``: draws of each subtask's difference in accuracy
        :math:`\delta_t = \phi_t(2 s_t - 1)` (the shrunk estimates).
    population_mean : numpy.ndarray
        Draws of the population mean difference, :math:`E[\delta]` over the population
        of subtasks (by quadrature for each draw; None when pooling is off).
    hyper : dict of str to numpy.ndarray
        Draws of ``nu, mu, sigma, mu_phi, tau_phi`` (empty when pooling is off); graded
        items: ``delta0, std0, nu``.
    idata : arviz.InferenceData
        The sampler's output (``s, phi, delta`` per subtask and the hyper-parameters).
    observed_means : numpy.ndarray or None
        Graded items: each subtask's observed mean difference (over its units).
    units : numpy.ndarray or None
        Graded items: each subtask's number of units (items, or clusters).
    """

    subtasks: tuple[str, ...] = ()
    counts: np.ndarray | None = field(default=None, repr=False, compare=False)
    delta: np.ndarray | None = field(default=None, repr=False, compare=False)
    population_mean: np.ndarray | None = field(default=None, repr=False, compare=False)
    hyper: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    idata: Any = field(default=None, repr=False, compare=False)
    observed_means: np.ndarray | None = field(default=None, repr=False, compare=False)
    units: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def observed_differences(self) -> np.ndarray:
        r"""Each subtask's observed difference: :math:`(n_{10} - n_{01}) / N_t`, or its mean."""
        if self.counts is None:
            return np.asarray(self.observed_means, dtype=float)
        c = np.asarray(self.counts, dtype=float)
        return (c[:, 1] - c[:, 2]) / c.sum(axis=1)

    def predictive_probabilities(self, rope: float | None = None) -> Probabilities:
        """Predictive probabilities (mean masses) for another ROPE, without refitting.

        Parameters
        ----------
        rope : float, optional
            ROPE half-width in accuracy units; default: the ROPE of the fit.
        """
        if rope is None and self.predictive is not None:
            return self.predictive
        masses = self._posterior().region_masses(self.rope if rope is None else rope)
        return probabilities_from_masses(masses, "mean")

    def subtask_frame(self, prob: float = 0.95) -> pd.DataFrame:
        """Per subtask: counts, observed difference and the shrunk difference (mean, HDI).

        Graded items: the number of units ``n`` (items, or clusters) instead of counts.

        Parameters
        ----------
        prob : float, default: 0.95
            Mass of each subtask's highest-density interval.
        """
        from isbetter.inference.summaries import hdi

        if self.delta is None or (self.counts is None and self.units is None):
            raise ValueError("this result holds no per-subtask draws (its light form)")
        bounds = hdi(self.delta.T, prob)
        if self.counts is None:
            frame = pd.DataFrame({"n": np.asarray(self.units, dtype=int)})
        else:
            frame = pd.DataFrame(np.asarray(self.counts, dtype=int), columns=list(COUNTS))
        frame.insert(0, "subtask", list(self.subtasks))
        frame["observed"] = self.observed_differences
        frame["mean"] = self.delta.mean(axis=0)
        frame["interval_low"] = bounds[:, 0]
        frame["interval_high"] = bounds[:, 1]
        return frame
