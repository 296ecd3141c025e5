"""The unit of work of a ranking: one pair of systems on one kind of evidence.

A :class:`PairTask` holds only what its comparison needs (the pair's paired
scores, or the pair's predictions) and is picklable, so it can run in another
process or on a Dask worker; :func:`run_task` runs it and returns the light,
JSON-safe summaries of its comparisons — the posterior draws stay in the worker.
Each task's seed is derived from the ranking's one seed and the task's identity
(metric and systems), never from its position, so a pair's numbers do not depend
on which worker ran it, in what order, or which other systems are ranked.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from isbetter.core.errors import RopeWarning
from isbetter.core.provenance import versions
from isbetter.inference import libs

if TYPE_CHECKING:
    from isbetter.inference.ranks import RankSummary
    from isbetter.results.comparison import ComparisonResult

__all__ = [
    "MetricFit",
    "PairTask",
    "pair_from_masses",
    "prepare",
    "run_task",
    "samples_with_nutpie",
    "simplex_points",
]


@dataclass(frozen=True)
class MetricFit:
    """What one metric's fit of a model of all the systems (joint, Plackett–Luce) gives a ranking.

    `tied_datasets` counts the data sets with tied scores (Plackett–Luce only).
    """

    pairs: list[ComparisonResult]
    simplex: dict[tuple[str, str], list[list[float]]]
    ranks: RankSummary
    converged: bool
    tied_datasets: int | None = None


@dataclass(frozen=True)
class PairTask:
    """One comparison of a ranking, ready to run anywhere.

    Attributes
    ----------
    kind : {"cv", "f1", "items"}
        Per-fold scores (:func:`isbetter.compare`), per-document predictions
        (:func:`isbetter.compare_f1`) or item scores over several subtasks (binary: the
        hierarchical paired model, :func:`~isbetter.items.subtasks.hierarchical_pair`;
        graded: the correlated-t model with rho = 0, :func:`~isbetter.items.subtasks.
        graded_pair`).
    metric : str
        The metric column (``"cv"``) or the measure (``"f1"``).
    system_a, system_b : str
        The pair, in the ranking's order of systems.
    rope : float
        ROPE half-width of this metric.
    method : str
        Method of :func:`isbetter.compare` (``"cv"``), model of
        :func:`isbetter.compare_f1` (``"f1"``), or ``"hierarchical"`` (binary) or
        ``"hierarchical_graded"`` (``"items"``).
    seed : int
        This task's seed (:func:`~isbetter.inference.seeds.pair_seed`).
    data : object
        ``PairedScores`` (``"cv"``), a ``PredictionTable`` of gold and the two
        systems (``"f1"``), or the pair's subtask counts, a DataFrame ``task, n11,
        n10, n01, n00`` (``"items"``, binary), or its items per subtask, a dict of
        ``PairedItems`` (``"items"``, graded).
    options : dict
        Further keyword options of the comparison (draws, chains, ...).
    """

    kind: str
    metric: str
    system_a: str
    system_b: str
    rope: float
    method: str
    seed: int
    data: Any = field(repr=False, compare=False)
    options: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """Return a hex digest over every input of the task, the package versions included."""
        h = hashlib.sha256()
        ident = {
            "kind": self.kind,
            "metric": self.metric,
            "system_a": self.system_a,
            "system_b": self.system_b,
            "rope": self.rope,
            "method": self.method,
            "seed": self.seed,
            "options": {k: repr(v) for k, v in sorted(self.options.items())},
            "versions": versions(),
        }
        h.update(json.dumps(ident, sort_keys=True).encode())
        for array in _arrays(self.data):
            h.update(str(array.dtype).encode() + str(array.shape).encode())
            h.update(np.ascontiguousarray(array).tobytes())
        return h.hexdigest()


def _arrays(data: Any) -> list[np.ndarray]:
    if isinstance(data, dict):  # graded items per subtask: PairedItems
        return [
            x
            for task, p in data.items()
            for x in (
                np.asarray([task, *p.items, *([] if p.clusters is None else p.clusters)]),
                np.asarray(p.a, dtype=float),
                np.asarray(p.b, dtype=float),
                np.asarray(p.runs, dtype=np.int64),
            )
        ]
    if hasattr(data, "columns"):  # subtask counts
        return [data[c].to_numpy().astype(str if c == "task" else np.int64) for c in data.columns]
    if hasattr(data, "differences"):  # PairedScores
        return [np.asarray(d, dtype=float) for d in data.differences] + [
            np.asarray(data.n_folds),
            np.asarray(data.n_runs),
            np.asarray([str(d) for d in data.datasets]),
        ]
    return [np.asarray(data.gold).astype(str)] + [
        np.asarray(p).astype(str) for p in data.predictions.values()
    ]


#: simplex points (per-draw region masses) kept per comparison for the triangle plots
SIMPLEX_POINTS = 200


def simplex_points(masses: np.ndarray) -> list[list[float]]:
    """Return at most :data:`SIMPLEX_POINTS` evenly thinned per-draw masses, rounded to 4 places."""
    masses = np.asarray(masses, dtype=float)
    step = max(1, masses.shape[0] // SIMPLEX_POINTS)
    return np.round(masses[::step][:SIMPLEX_POINTS], 4).tolist()


def pair_from_masses(masses: np.ndarray, **fields: Any) -> ComparisonResult:
    """Return a pair of a model of all the systems from its per-draw region masses.

    Its probabilities are the argmax-counted masses and its predictive ones their
    mean; `fields` are the result's other fields (method, systems, metric, ...).
    """
    from isbetter.inference.decisions import probabilities_from_masses
    from isbetter.results.comparison import ComparisonResult

    p = probabilities_from_masses(masses, "argmax")
    return ComparisonResult(
        p_a_better=p.p_a_better,
        p_rope=p.p_rope,
        p_b_better=p.p_b_better,
        counting="argmax",
        predictive=probabilities_from_masses(masses, "mean"),
        **fields,
    )


def _outcome(res: Any) -> dict[str, Any]:
    """Return a comparison's summary and a thinned, rounded sample of its simplex points."""
    masses = res.posterior.region_masses(res.rope)
    return {"summary": res.summary().to_dict(), "simplex": simplex_points(masses)}


def run_task(task: PairTask) -> list[dict[str, Any]]:
    """Run one task; return, per comparison, its JSON-safe summary and simplex points.

    A per-fold task gives one comparison; a per-document task gives one per
    ranked row: the positive class of a binary task, the macro- and
    micro-averaged rows of a multi-class one, or each reported class when there
    are no averaged rows (``classes=`` names some classes, or every class). Each item is
    ``{"summary": ComparisonResult.to_dict(), "simplex": [[a, rope, b], ...]}``
    with at most :data:`SIMPLEX_POINTS` points (rounded to 4 decimals).
    """
    from isbetter.inference.sampling import convergence_recorded_only

    # poor convergence is recorded in each summary's diagnostics; the ranking warns once
    with convergence_recorded_only():  # (thread-safe, as catch_warnings is not)
        return _run(task)


def samples_with_nutpie(task: PairTask) -> bool:
    """Whether `task` is a hierarchical fit that nutpie samples (per-fold scores, items).

    Such fits may run side by side in threads (their samplers run outside the GIL and
    stop through :data:`~isbetter.inference.sampling.STOP`); PyMC's sampler may not.
    nutpie is looked for, not imported. The items' model of binary items over subtasks is
    nutpie's only; that of graded items is the per-fold model's.
    """
    import importlib.util

    if task.kind == "items" and task.method == "hierarchical":
        return True
    return (
        task.kind in ("cv", "items")
        and task.method in ("hierarchical", "hierarchical_graded")
        and task.options.get("backend", "auto") != "pymc"
        and importlib.util.find_spec("nutpie") is not None
    )


def prepare(task: PairTask) -> None:
    """Import and load in this thread what running `task` needs, before threads run it.

    A fit that nutpie samples: nutpie (which imports ArviZ, 1.5 s) and the compiled
    densities, so that a Ctrl-C meanwhile stops this thread at once, and no thread that
    runs the tasks is held up in an import when they stop.
    """
    if samples_with_nutpie(task):
        libs.nutpie()

        if task.kind == "items" and task.method == "hierarchical":
            from isbetter.items.hierarchical.density import load_density
        else:
            from isbetter.cv.hierarchical.compiled_backend import load_density
        load_density()


def _run(task: PairTask) -> list[dict[str, Any]]:
    if task.kind == "items":
        from isbetter.items.subtasks import graded_pair, hierarchical_pair

        fit: dict[str, Any] = {
            "metric": task.metric,
            "rope": task.rope,
            "seed": task.seed,
            "draws": task.options.get("draws"),
        }
        if task.method == "hierarchical_graded":
            res = graded_pair(task.data, **fit)
        else:
            res = hierarchical_pair(
                task.data, task.system_a, task.system_b, **fit, chains=task.options.get("chains")
            )
        return [_outcome(res)]
    if task.kind == "cv":
        from isbetter.cv.compare import compare

        res = compare(task.data, rope=task.rope, method=task.method, rng=task.seed, **task.options)
        return [_outcome(res)]
    from isbetter.f1.compare import compare_f1
    from isbetter.f1.legacy import COMPARE_F1, compare_f1_keywords

    arguments = {
        "data": task.data,
        "system_a": task.system_a,
        "system_b": task.system_b,
        "metric": task.metric,
        "rope": task.rope,
        "model": task.method,
        "rng": task.seed,
        **{k: v for k, v in task.options.items() if k not in COMPARE_F1},
    }
    # a ranking's options keep the names of every comparison (tune, chains, beta, ...):
    # mapped here to compare_f1's typed options, as the F1 comparison's old keywords are
    compare_f1_keywords({k: v for k, v in task.options.items() if k in COMPARE_F1}, arguments)
    with warnings.catch_warnings():  # rank checked each metric's ROPE once, not per pair
        warnings.simplefilter("ignore", RopeWarning)
        f1 = compare_f1(**arguments)
    # a multi-class task with every class reported is ranked on its macro and micro rows;
    # otherwise on each reported class (a binary task: its positive class)
    rows = ("macro", "micro") if "macro" in f1.comparisons else f1.classes
    return [_outcome(f1.comparisons[r]) for r in rows]
