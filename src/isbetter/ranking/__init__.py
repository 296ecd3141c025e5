"""Rank many systems on one or more metrics: every pair compared, a partial order per metric.

:func:`rank` compares every pair of systems on every metric — the hierarchical
model for per-fold scores on several data sets, the correlated t-test for one
data set, the paired F1 model for per-document predictions — reads each pair's
relation off its probabilities (likelihood or threshold rule), and builds per
metric the partial order (:mod:`isbetter.ranking.order`). Pairs are independent:
they run in local processes by default, on any ``concurrent.futures`` executor
or on a Dask cluster (:mod:`isbetter.ranking.execution`), optionally cached on
disk so an interrupted ranking resumes.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from isbetter.core.errors import ConvergenceWarning, InputError, InputTypeError
from isbetter.core.provenance import make_settings
from isbetter.core.validate import (
    RNGLike,
    check_choice,
    check_probability,
    check_rope,
    resolve_seed,
)
from isbetter.core.vocabulary import F1_MODELS, RANKING_METHODS, RANKING_RULES
from isbetter.ranking.result import RankingResult, orders_of, relations_of
from isbetter.ranking.tasks import PairTask, pair_seed
from isbetter.results.comparison import ComparisonSummary

__all__ = ["RankingResult", "rank"]


def rank(
    data: Any,
    *,
    systems: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    rope: float | Mapping[str, float] = 0.0,
    method: str = "auto",
    rule: str = "likelihood",
    threshold: float = 0.95,
    margin: float = 0.05,
    executor: Any = None,
    jobs: int | None = None,
    cache_dir: Any = None,
    progress: bool | None = None,
    rng: RNGLike = None,
    **options: Any,
) -> RankingResult:
    """Rank systems: compare every pair on every metric and build the partial orders.

    Parameters
    ----------
    data : ScoreTable or PredictionTable
        Per-fold scores (:func:`~isbetter.read_scores`; each metric column with
        its direction) or per-document predictions (:func:`~isbetter.read_predictions`).
    systems : sequence of str, optional
        The systems to rank, in the order to report them; default: all.
    metrics : sequence of str, optional
        Metric columns (scores), or measures such as ``"f1"`` (predictions);
        default: every metric column, or ``("f1",)``.
    rope : float or mapping, default: 0.0
        ROPE half-width, one for all metrics or one per metric (``{"acc": 0.01}``).
    method : str, default: "auto"
        Scores: a method of :func:`~isbetter.compare` (``"auto"``: hierarchical for
        several data sets, the correlated t-test for one), or ``"joint"``: one joint
        correlated model of all the systems per metric (:mod:`isbetter.ranking.joint`),
        whose one posterior gives every pair's probabilities (so no cycles within a
        draw), P(best), expected ranks, rank intervals and the most probable orders
        (:attr:`RankingResult.joint`). Predictions: a model of
        :func:`~isbetter.compare_f1` (``"auto"`` is ``"paired"``).
    rule : {"likelihood", "threshold"}, default: "likelihood"
        ``"likelihood"``: the most probable relation, "≳"/"≲" when the runner-up is
        the ROPE within `margin` (Szymański & Gorman 2020); ``"threshold"``: a
        relation only where its probability reaches `threshold`, else undecided.
    threshold : float, default: 0.95
        Probability the threshold rule needs.
    margin : float, default: 0.05
        How close the likelihood rule's winner and runner-up must be to call a pair "≳".
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the pairs run; default: local processes (`jobs` of them). Not with
        ``method="joint"`` (nor `cache_dir`, nor `jobs` above 1): it runs one fit per
        metric, in this process.
    jobs : int, optional
        Local worker processes (default: the number of CPUs; 1 runs in this process).
    cache_dir : path, optional
        Store each finished pair here (JSON, checksummed) and reuse it: an
        interrupted ranking resumes. Nothing is written without it.
    progress : bool, optional
        Progress bar on stderr (default: when stderr is a terminal).
    rng : int, numpy.random.Generator or None
        The one seed; each pair's seed is derived from it and the pair's names.
    **options
        Options of the comparisons (e.g. ``draws``, ``chains``, ``tune``, ``cores`` of
        the hierarchical and the joint models; ``draws``, ``measure`` parameters of the
        F1 model).

    Returns
    -------
    RankingResult
    """
    from isbetter.cv.scores import ScoreTable
    from isbetter.f1.predictions import PredictionTable
    from isbetter.ranking.execution import run_tasks

    rule = check_choice(rule, "rule", RANKING_RULES)
    threshold = check_probability(threshold, "threshold", open_interval=False)
    if threshold <= 0:
        raise InputError(f"`threshold` must be in (0, 1], got {threshold!r}.")
    margin = check_probability(margin, "margin")
    seed = resolve_seed(rng)
    request = _Request(systems, metrics, rope, method, seed, options)
    if method == "joint":
        pairwise = (("executor", executor), ("jobs", jobs), ("cache_dir", cache_dir))
        given = [name for name, value in pairwise if value not in (None, 1)]
        if given:
            raise InputError(
                f"`{given[0]}` applies to the pairwise route; method='joint' is one fit per "
                "metric, run in this process (its chains in parallel): leave it out."
            )
        return _joint(data, request, rule, threshold, margin)
    if isinstance(data, ScoreTable):
        tasks, ropes, method = _cv_tasks(data, request)
    elif isinstance(data, PredictionTable):
        tasks, ropes, method = _f1_tasks(data, request)
    else:
        raise InputTypeError(
            "`data` must be a ScoreTable (isbetter.read_scores) or a PredictionTable "
            f"(isbetter.read_predictions), got {type(data).__name__}."
        )
    names = tuple(systems) if systems is not None else data.systems
    outcomes, stats = run_tasks(
        tasks, executor=executor, jobs=jobs, cache_dir=cache_dir, progress=progress
    )
    return _assemble(names, tasks, outcomes, stats, ropes, method, rule, threshold, margin, request)


def _ropes(rope: float | Mapping[str, float], metrics: Sequence[str]) -> dict[str, float]:
    if isinstance(rope, Mapping):
        missing = [m for m in metrics if m not in rope]
        if missing:
            raise InputError(
                "`rope` gives no ROPE for metric(s) "
                + ", ".join(map(repr, missing))
                + "; give one per metric, or one number for all."
            )
        return {m: check_rope(rope[m], f"rope[{m!r}]") for m in metrics}
    value = check_rope(rope)
    return dict.fromkeys(metrics, value)


def _systems(available: Sequence[str], systems: Sequence[str] | None) -> tuple[str, ...]:
    if systems is None:
        names = tuple(available)
    else:
        names = tuple(systems)
        unknown = [s for s in names if s not in available]
        if unknown:
            raise InputError(
                "`systems`: unknown system(s) "
                + ", ".join(map(repr, unknown))
                + ". Available systems: "
                + ", ".join(map(repr, available))
                + "."
            )
    if len(set(names)) != len(names):
        raise InputError(f"`systems` names a system twice: {names!r}.")
    if len(names) < 2:
        raise InputError(f"A ranking needs at least 2 systems, got {len(names)}.")
    return names


@dataclass(frozen=True)
class _Request:
    """What :func:`rank` was asked for, as the builders of the pair tasks need it."""

    systems: Sequence[str] | None
    metrics: Sequence[str] | None
    rope: float | Mapping[str, float]
    method: str
    seed: int
    options: dict[str, Any]


def _cv_tasks(table: Any, request: _Request) -> tuple[list[PairTask], dict, str]:
    names = _systems(table.systems, request.systems)
    metrics = tuple(table.metrics) if request.metrics is None else tuple(request.metrics)
    for m in metrics:
        table._metric(m)  # unknown metric: InputError naming it
        counts = table.data.groupby("system")[m].count()
        for s in names:
            if counts.get(s, 0) == 0:
                raise InputError(f"System {s!r} has no scores on metric {m!r}.")
    ropes = _ropes(request.rope, metrics)
    method = check_choice(request.method, "method", RANKING_METHODS)
    if method == "auto":
        method = "hierarchical" if len(table.datasets) > 1 else "correlated_t"
    # each fit's chains may use every core (`cores`, default: all): while all workers are
    # busy the threads share the cores, and the last fits of a ranking use the cores that
    # finished workers left idle (the five UCI classifiers: 60 s with cores=1, 51 s without)
    opts = dict(request.options)

    def pair(m: str, a: str, b: str) -> Any:
        return table.paired(a, b, metric=m)

    tasks = _pair_tasks("cv", names, metrics, ropes, method, request.seed, opts, pair)
    return tasks, ropes, method


def _f1_tasks(table: Any, request: _Request) -> tuple[list[PairTask], dict, str]:
    from isbetter.f1.predictions import PredictionTable

    names = _systems(table.systems, request.systems)
    measures = ("f1",) if request.metrics is None else tuple(request.metrics)
    rope = request.rope
    ropes = _ropes(rope if not (isinstance(rope, int | float) and rope == 0) else 0.05, measures)
    method = request.method
    method = "paired" if method == "auto" else check_choice(method, "method", F1_MODELS)

    def pair(m: str, a: str, b: str) -> Any:
        predictions = {a: table.predictions[a], b: table.predictions[b]}
        return PredictionTable(gold=table.gold, predictions=predictions, labels=table.labels)

    tasks = _pair_tasks("f1", names, measures, ropes, method, request.seed, request.options, pair)
    return tasks, ropes, method


def _pair_tasks(
    kind: str,
    names: tuple[str, ...],
    metrics: Sequence[str],
    ropes: dict[str, float],
    method: str,
    seed: int,
    options: dict[str, Any],
    data_of: Callable[[str, str, str], Any],
) -> list[PairTask]:
    """One task per metric and pair of systems (metric by metric, pairs in input order)."""
    return [
        PairTask(
            kind, m, a, b, ropes[m], method, pair_seed(seed, m, a, b), data_of(m, a, b), options
        )
        for m in metrics
        for a, b in itertools.combinations(names, 2)
    ]


def _ranking_metric(task: PairTask, summary: dict[str, Any]) -> str:
    label = summary.get("label")
    if task.kind == "f1" and label in ("macro", "micro"):
        return f"{task.metric} {label}"
    return task.metric


def _joint(
    data: Any, request: _Request, rule: str, threshold: float, margin: float
) -> RankingResult:
    """One joint fit per metric (:mod:`isbetter.ranking.joint`), then the orders."""
    from isbetter.cv.scores import ScoreTable
    from isbetter.ranking.joint import joint_metric

    if not isinstance(data, ScoreTable):
        raise InputError(
            "`method='joint'` ranks per-fold scores (a ScoreTable from isbetter.read_scores), "
            f"got {type(data).__name__}; rank per-document predictions pairwise."
        )
    names = _systems(data.systems, request.systems)
    metrics = tuple(data.metrics) if request.metrics is None else tuple(request.metrics)
    for m in metrics:
        data._metric(m)  # unknown metric: InputError naming it
    ropes = _ropes(request.rope, metrics)
    pairs: list[ComparisonSummary] = []
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = {}
    joint = {}
    for m in metrics:
        fit = joint_metric(data, names, m, ropes[m], request.seed, request.options)
        pairs += fit.pairs
        simplex[m] = fit.simplex
        joint[m] = fit.ranks
        if not fit.converged:
            d = fit.pairs[0].diagnostics
            warnings.warn(
                f"The joint model's fit on {m!r} did not converge well ({d}); its diagnostics "
                "are in every pair's summary. Increase `tune` and `draws`.",
                ConvergenceWarning,
                stacklevel=3,
            )
    stats = {"computed": len(metrics), "cached": 0, "executor": "serial", "workers": 1}
    return _finish(
        names, pairs, simplex, ropes, "joint", rule, threshold, margin, request, stats, joint
    )


def _assemble(
    names: tuple[str, ...],
    tasks: list[PairTask],
    outcomes: list[list[dict]],
    stats: dict[str, Any],
    ropes: dict[str, float],
    method: str,
    rule: str,
    threshold: float,
    margin: float,
    request: _Request,
) -> RankingResult:
    pairs: list[ComparisonSummary] = []
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = {}
    for task, items in zip(tasks, outcomes, strict=True):
        for item in items:
            data = dict(item["summary"])
            metric = _ranking_metric(task, data)
            data["settings"] = {**data["settings"], "ranking_metric": metric}
            summary = ComparisonSummary.from_dict(data)
            simplex.setdefault(metric, {})[(summary.system_a, summary.system_b)] = item["simplex"]
            pairs.append(summary)
    poor = [p for p in pairs if p.diagnostics is not None and not p.diagnostics.converged]
    if poor:
        shown = ", ".join(f"{p.system_a} vs {p.system_b}" for p in poor[:5])
        warnings.warn(
            f"{len(poor)} of {len(pairs)} comparisons did not converge well ({shown}"
            f"{' ...' if len(poor) > 5 else ''}); their diagnostics are in the pairwise table. "
            "Increase `tune` and `draws`.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return _finish(names, pairs, simplex, ropes, method, rule, threshold, margin, request, stats)


def _finish(
    names: tuple[str, ...],
    pairs: list[ComparisonSummary],
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]],
    ropes: dict[str, float],
    method: str,
    rule: str,
    threshold: float,
    margin: float,
    request: _Request,
    stats: dict[str, Any],
    joint: dict[str, Any] | None = None,
) -> RankingResult:
    """Return the ranking of `pairs`: their relations, the orders and the settings."""
    relations = relations_of(pairs, rule, threshold, margin)
    metrics = list(relations)
    orders = orders_of(names, pairs, relations)
    seed, options = request.seed, request.options
    single = set(ropes.values())
    settings = make_settings(
        "ranking",
        seed,
        **({"rope": single.pop()} if len(single) == 1 else {}),
        ropes=ropes,
        rule=rule,
        threshold=threshold,
        margin=margin,
        comparison_method=method,
        options={
            k: repr(v) if not isinstance(v, int | float | str | bool) else v
            for k, v in options.items()
        },
        execution=stats,
    )
    return RankingResult(
        systems=names,
        metrics=tuple(metrics),
        rule=rule,
        threshold=threshold,
        margin=margin,
        pairs=tuple(pairs),
        relations=relations,
        orders=orders,
        simplex=simplex,
        settings=settings,
        joint=joint or {},
    )
