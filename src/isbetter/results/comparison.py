"""The result of comparing two systems, in full or in its light form.

Every comparison of isbetter — the correlated t-test, the sign and signed-rank
tests, the hierarchical model, each row of an F1 comparison (a class, macro or
micro) — returns a :class:`ComparisonResult`; the hierarchical model returns the
subclass :class:`HierarchicalResult`, which adds the per-data-set estimates.
All satisfy one contract:

* identity: ``system_a``, ``system_b``, ``metric`` (and its direction), ``dataset``
  and ``label`` (the class of an F1 row) where they apply;
* ``rope`` and the three probabilities ``p_a_better, p_rope, p_b_better`` with
  ``counting`` (how they were read off the posterior);
* optional ``predictive`` probabilities, ``estimate`` of the difference,
  frequentist ``tests`` beside it and MCMC ``diagnostics``;
* ``settings`` (method, seed, model options, versions);
* :meth:`~ComparisonResult.summary` — the same result without its posterior (the
  light form: JSON-serialisable, picklable, a few KB) — and
  :meth:`~ComparisonResult.to_frame`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.provenance import signature
from isbetter.core.validate import check_rope
from isbetter.core.vocabulary import ROPELESS_METHODS, rope_text
from isbetter.inference.decisions import (
    Counting,
    Relation,
    mirror,
    probabilities_from_masses,
    threshold_decision,
)
from isbetter.inference.records import (
    Estimate,
    Interval,
    MCMCDiagnostics,
    Observed,
    Probabilities,
    TestResult,
)

if TYPE_CHECKING:
    from isbetter.inference.posterior import HierarchicalPosterior, Posterior

__all__ = ["ComparisonResult", "HierarchicalResult"]

#: identity and probabilities: the first fields of a result's dictionary and record
_HEAD = (
    "method",
    "system_a",
    "system_b",
    "metric",
    "higher_is_better",
    "dataset",
    "label",
    "rope",
    "p_a_better",
    "p_rope",
    "p_b_better",
    "counting",
)
#: the record's columns read from the observed scores and the MCMC diagnostics
_OBSERVED = ("n", "n_positive", "score_a", "score_b")
_DIAGNOSTICS = ("r_hat_max", "ess_bulk_min", "ess_tail_min", "divergences", "converged")


def _columns(obj: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """``{name: obj.name}`` for each of `names`."""
    return {name: getattr(obj, name) for name in names}


def _optional(data: dict[str, Any], key: str, cls: Any) -> Any:
    """``cls.from_dict(data[key])``, or None when `data` has none."""
    value = data.get(key)
    return None if value is None else cls.from_dict(value)


@dataclass(frozen=True)
class ComparisonResult:
    """Result of a Bayesian comparison of two systems.

    Attributes
    ----------
    system_a, system_b : str
        Names of the systems; the difference ``d`` is positive when A is better
        (``score(A) - score(B)`` for a higher-is-better metric).
    rope : float
        Half-width of the region of practical equivalence, in score units.
    p_a_better, p_rope, p_b_better : float
        Posterior probabilities of the three regions (they sum to 1), read off
        the posterior with :attr:`counting`.
    method : str
        Which model produced the result, e.g. ``"correlated_t"``.
    posterior : Posterior or None
        The posterior (draws or a closed form); see :mod:`isbetter.inference.posterior`.
        None in the light form (:meth:`summary`, :meth:`from_dict`).
    settings : dict
        What reproduces the result: method, parameters, seed, versions.
    counting : {"argmax", "mean"}
        How the probabilities were read off the posterior.
    metric : str
        The metric compared.
    higher_is_better : bool
        Its direction (``d = B - A`` in raw units for a lower-is-better metric).
    dataset : str or None
        The data set of a one-data-set comparison.
    label : str or None
        The class of an F1 row (a class label, ``"macro"`` or ``"micro"``).
    predictive : Probabilities or None
        Posterior predictive probabilities, where they differ from the above.
    estimate : Estimate or None
        Posterior mean, sd, Monte Carlo error, credible interval of ``d`` ...
    tests : tuple of TestResult
        Frequentist tests on the same data.
    diagnostics : MCMCDiagnostics or None
        Convergence diagnostics when MCMC was used.
    observed : Observed or None
        Sizes and observed scores (before any model).
    ranking_metric : str or None
        In a ranking, the name its rows go by: the metric, or ``"<metric> <label>"``
        for one of several rows of an F1 comparison (``"f1 macro"``); None outside one.
    """

    system_a: str
    system_b: str
    rope: float
    p_a_better: float
    p_rope: float
    p_b_better: float
    method: str
    posterior: Posterior | None = field(default=None, repr=False, compare=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    counting: Counting = "mean"
    metric: str = "score"
    higher_is_better: bool = True
    dataset: str | None = None
    label: str | None = None
    predictive: Probabilities | None = None
    estimate: Estimate | None = field(default=None, compare=False)
    tests: tuple[TestResult, ...] = field(default=(), compare=False)
    diagnostics: MCMCDiagnostics | None = field(default=None, compare=False)
    observed: Observed | None = field(default=None, compare=False)
    ranking_metric: str | None = None

    kind = "comparison"

    @classmethod
    def from_posterior(
        cls,
        posterior: Posterior,
        *,
        system_a: str,
        system_b: str,
        rope: float,
        method: str,
        settings: dict[str, Any],
        **extra: Any,
    ) -> ComparisonResult:
        """Build a result, computing the probabilities from `posterior`."""
        rope = check_rope(rope)
        p = probabilities_from_masses(posterior.region_masses(rope), posterior.counting)
        return cls(
            system_a=system_a,
            system_b=system_b,
            rope=rope,
            p_a_better=p.p_a_better,
            p_rope=p.p_rope,
            p_b_better=p.p_b_better,
            method=method,
            posterior=posterior,
            settings=settings,
            counting=posterior.counting,
            **extra,
        )

    def probabilities(self, rope: float | None = None) -> Probabilities:
        """Return the three probabilities, or those for another ROPE without refitting.

        Parameters
        ----------
        rope : float, optional
            ROPE half-width in score units; default: the ROPE of the fit. Another
            ROPE needs the posterior, which the light form does not hold.
        """
        if rope is None or (self.posterior is None and rope == self.rope):
            return Probabilities(self.p_a_better, self.p_rope, self.p_b_better)
        return probabilities_from_masses(self._posterior().region_masses(rope), self.counting)

    def _posterior(self) -> Posterior:
        """Return the posterior; raise a clear error in the light form, which has none."""
        if self.posterior is None:
            raise InputError(
                "This is the light form of the result (its summary() or a saved JSON): it holds "
                "no posterior; use the result the comparison returned."
            )
        return self.posterior

    @property
    def signature(self) -> str:
        """The one-line reproducibility signature (no ROPE for a model without one)."""
        rope = {} if self.method in ROPELESS_METHODS else {"rope": self.rope}
        return signature({**self.settings, **rope})

    def decision(self, threshold: float = 0.95) -> Relation:
        """``a_better``, ``equivalent`` or ``b_better`` when its probability reaches `threshold`.

        Otherwise ``undecided`` (see :func:`isbetter.inference.decisions.threshold_decision`).
        """
        return threshold_decision(self.probabilities(), threshold)

    def test(self, name: str) -> TestResult | None:
        """The frequentist test called `name`, or None."""
        return next((t for t in self.tests if t.name == name), None)

    def summary(self) -> ComparisonResult:
        """Return the light form of this result: no posterior, JSON-serialisable, picklable.

        A :class:`ComparisonResult` with the same fields (a :class:`HierarchicalResult`
        also drops its per-data-set draws).
        """
        light = {f.name: getattr(self, f.name) for f in fields(ComparisonResult)}
        return ComparisonResult(**{**light, "posterior": None})

    def swapped(self) -> ComparisonResult:
        """Return the light form of this comparison seen from B's side (A and B exchanged).

        The probabilities of A and B exchange; every number about the difference
        changes sign (the estimate and its interval, the frequentist tests' statistics,
        estimates and intervals, the observed difference), P(d < 0) and P(d > 0)
        exchange and the HDI + ROPE decision mirrors. Sizes, p-values (two-sided),
        Bayes factors, standard deviations, Monte Carlo errors, diagnostics and
        settings are the same. No posterior: this is the light form.

        Examples
        --------
        >>> r = ComparisonResult("a", "b", 0.01, 0.7, 0.2, 0.1, "sign")
        >>> s = r.swapped()
        >>> (s.system_a, s.system_b, s.p_a_better, s.p_b_better), s.swapped() == r
        (('b', 'a', 0.1, 0.7), True)
        """
        pred = self.predictive
        return replace(
            self.summary(),
            system_a=self.system_b,
            system_b=self.system_a,
            p_a_better=self.p_b_better,
            p_b_better=self.p_a_better,
            predictive=None if pred is None else Probabilities(*pred.as_tuple()[::-1]),
            estimate=None if self.estimate is None else _swapped_estimate(self.estimate),
            tests=tuple(_swapped_test(t) for t in self.tests),
            observed=None if self.observed is None else _swapped_observed(self.observed),
        )

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe nested data, no draws (``kind`` first, ``signature`` included).

        A ranking's row keeps its :attr:`ranking_metric` in ``settings``, as files always had.
        """
        settings = self.settings
        if self.ranking_metric is not None:
            settings = {**settings, "ranking_metric": self.ranking_metric}
        return {
            "kind": self.kind,
            **_columns(self, _HEAD),
            "predictive": None if self.predictive is None else self.predictive.to_dict(),
            "estimate": None if self.estimate is None else self.estimate.to_dict(),
            "tests": [t.to_dict() for t in self.tests],
            "diagnostics": None if self.diagnostics is None else self.diagnostics.to_dict(),
            "observed": None if self.observed is None else self.observed.to_dict(),
            "seed": self.settings.get("seed"),
            "settings": settings,
            "signature": self.signature,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComparisonResult:
        """Rebuild the light form from :meth:`to_dict` (e.g. after a JSON round trip)."""
        settings = dict(data["settings"])
        ranking_metric = settings.pop("ranking_metric", None)
        return cls(
            method=data["method"],
            system_a=data["system_a"],
            system_b=data["system_b"],
            metric=data["metric"],
            higher_is_better=bool(data["higher_is_better"]),
            rope=float(data["rope"]),
            p_a_better=float(data["p_a_better"]),
            p_rope=float(data["p_rope"]),
            p_b_better=float(data["p_b_better"]),
            counting=data["counting"],
            settings=settings,
            dataset=data.get("dataset"),
            label=data.get("label"),
            predictive=_optional(data, "predictive", Probabilities),
            estimate=_optional(data, "estimate", Estimate),
            tests=tuple(TestResult.from_dict(t) for t in data.get("tests", [])),
            diagnostics=_optional(data, "diagnostics", MCMCDiagnostics),
            observed=_optional(data, "observed", Observed),
            ranking_metric=ranking_metric,
        )

    def to_record(self) -> dict[str, Any]:
        """One flat row: identity, probabilities, estimate, test p-values, diagnostics."""
        row = _columns(self, _HEAD)
        if self.observed is not None:
            row.update(_columns(self.observed, _OBSERVED), observed=self.observed.difference)
        if self.predictive is not None:
            row.update({f"predictive_{k}": v for k, v in self.predictive.to_dict().items()})
        if self.estimate is not None:
            e = self.estimate
            row.update(
                mean=e.mean,
                sd=e.sd,
                mcse=e.mcse,
                interval_low=e.interval.low,
                interval_high=e.interval.high,
                interval_prob=e.interval.prob,
                p_below_0=e.p_below_0,
                p_above_0=e.p_above_0,
                **e.bayes_factors(),
                decision=e.decision,
            )
        for t in self.tests:
            row[f"{t.name}_p_value"] = t.p_value
        if self.diagnostics is not None:
            row.update(_columns(self.diagnostics, _DIAGNOSTICS))
        row["seed"] = self.settings.get("seed")
        return row

    def to_frame(self) -> pd.DataFrame:
        """Return a one-row DataFrame of :meth:`to_record`."""
        return pd.DataFrame([self.to_record()])

    def __str__(self) -> str:
        """One short line; ``isbetter.report.render(result, "text")`` gives the full report."""
        direction = "higher is better" if self.higher_is_better else "lower is better"
        where = "".join(
            f", {k} {v}" for k, v in (("data set", self.dataset), ("class", self.label)) if v
        )
        return (
            f"{self.method}: {self.system_a} vs {self.system_b} on {self.metric} ({direction}"
            f"{where}), {rope_text(self.rope)}: P({self.system_a} better) {self.p_a_better:.4f}, "
            f"P(equivalent) {self.p_rope:.4f}, P({self.system_b} better) {self.p_b_better:.4f} "
            f"[{self.counting}]"
        )


def _swapped_interval(interval: Interval) -> Interval:
    """Return the interval of -d: (-high, -low)."""
    return replace(interval, low=-interval.high, high=-interval.low)


def _swapped_estimate(e: Estimate) -> Estimate:
    """Return the posterior summary of -d (:meth:`ComparisonResult.swapped`)."""
    return replace(
        e,
        mean=-e.mean,
        interval=_swapped_interval(e.interval),
        p_below_0=e.p_above_0,
        p_above_0=e.p_below_0,
        decision=mirror(e.decision),
    )


def _swapped_test(t: TestResult) -> TestResult:
    """Return a frequentist test of -d: signed statistic, estimate and interval negated."""
    interval = None if t.interval is None else _swapped_interval(t.interval)
    return replace(t, statistic=-t.statistic, estimate=-t.estimate, interval=interval)


def _swapped_observed(o: Observed) -> Observed:
    """Return the observed scores of B and A, and their difference."""
    return replace(o, score_a=o.score_b, score_b=o.score_a, difference=-o.difference)


@dataclass(frozen=True)
class HierarchicalResult(ComparisonResult):
    r"""Result of the hierarchical comparison of two systems over many data sets.

    The inherited ``p_a_better, p_rope, p_b_better`` are **argmax counts**: the
    fraction of posterior draws in which each region holds the largest mass of
    :math:`\delta_{next}` (Corani et al. 2017; Szymański & Gorman 2020; baycomp).
    :attr:`predictive` holds the **predictive probabilities**
    :math:`P(\delta_{next} \in \text{region})`, the mean masses; :attr:`estimate`
    summarises the posterior of the mean difference :math:`\delta_0`.

    Attributes
    ----------
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
        The full PyMC/ArviZ output (``delta0, std0, delta`` in score units).
    """

    datasets: tuple[str, ...] = ()
    delta: np.ndarray | None = field(default=None, repr=False, compare=False)
    observed_means: np.ndarray | None = field(default=None, repr=False, compare=False)
    delta0: np.ndarray | None = field(default=None, repr=False, compare=False)
    std0: np.ndarray | None = field(default=None, repr=False, compare=False)
    nu: np.ndarray | None = field(default=None, repr=False, compare=False)
    idata: Any = field(default=None, repr=False, compare=False)

    @property
    def next_posterior(self) -> HierarchicalPosterior:
        r"""The posterior of :math:`\delta_{next}` (Student-t per draw)."""
        return self.posterior  # type: ignore[return-value]

    def predictive_probabilities(self, rope: float | None = None) -> Probabilities:
        """Predictive probabilities (mean masses) for another ROPE, without refitting.

        Parameters
        ----------
        rope : float, optional
            ROPE half-width in score units; default: the ROPE of the fit.
        """
        if rope is None and self.predictive is not None:
            return self.predictive
        masses = self._posterior().region_masses(self.rope if rope is None else rope)
        return probabilities_from_masses(masses, "mean")

    def dataset_frame(self, prob: float = 0.95) -> pd.DataFrame:
        """Per data set: observed mean difference and the shrinkage estimate (mean, HDI)."""
        from isbetter.inference.summaries import hdi

        if self.delta is None or self.observed_means is None:
            raise ValueError("this result holds no per-data-set draws")
        bounds = hdi(self.delta.T, prob)
        return pd.DataFrame(
            {
                "dataset": list(self.datasets),
                "observed_mean": self.observed_means,
                "mean": self.delta.mean(axis=0),
                "interval_low": bounds[:, 0],
                "interval_high": bounds[:, 1],
            }
        )
