"""Two language models over several subtasks: the hierarchical model, or the micro average.

A table of several tasks (MMLU's 57 subjects, BBH's 23 tasks) is compared in one of two
ways, chosen by `pool` (:data:`~isbetter.core.vocabulary.ITEM_POOLS`):

* ``"hierarchical"`` (the default for two or more subtasks): the hierarchical paired
  model of binary items (:func:`~isbetter.items.hierarchical.model.hierarchical_items`,
  DESIGN §4.3) — the population mean difference, the next subtask's difference with its
  three regions, and each subtask's shrunk difference (:func:`compare_subtasks`); graded
  items (partial credit, means over runs) and items in clusters go to the hierarchical
  correlated-t model of §3.2 with ρ = 0 instead (:mod:`isbetter.items.graded`; a cluster
  one unit), with the same result;
* ``"micro"``: every (task, item) one item of one population (:func:`pooled_pair`), then
  the one-task models of :func:`~isbetter.items.compare.compare_paired_items` — a micro
  average over the tasks' items, not a model of the tasks.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.validate import check_choice, counted
from isbetter.core.vocabulary import ITEM_POOLS
from isbetter.inference.seeds import RNGLike, child, resolve_seed
from isbetter.items.baselines import item_baselines
from isbetter.items.hierarchical.counts import count_subtasks
from isbetter.items.joint import ItemMatrix
from isbetter.items.table import PairedItems, stacked

__all__ = [
    "binary_counts",
    "compare_subtasks",
    "graded_pair",
    "hierarchical_pair",
    "matrix_counts",
    "pooled_pair",
    "pooled_task",
    "resolve_pool",
    "subtasks_text",
]

#: the hierarchical model's posterior draws per chain by default (4 chains)
HIERARCHICAL_DRAWS = 1000
#: decimals of the per-subtask summaries kept in a result's settings
_DECIMALS = 6


def resolve_pool(pool: str, tasks: tuple[str, ...], task: str | None) -> str:
    """Return how to compare: ``"task"`` (one task), ``"hierarchical"`` or ``"micro"``.

    ``"auto"``: the hierarchical model for a table of several tasks compared without
    `task`, one task otherwise.

    Examples
    --------
    >>> resolve_pool("auto", ("a", "b"), None), resolve_pool("auto", ("a", "b"), "a")
    ('hierarchical', 'task')
    >>> resolve_pool("micro", ("a", "b"), None), resolve_pool("auto", ("a",), None)
    ('micro', 'task')
    """
    pool = check_choice(pool, "pool", ITEM_POOLS)
    if task is not None:
        if pool != "auto":
            raise InputError(
                f"`pool={pool!r}` pools several subtasks, and `task` names one to compare: "
                "give one of them."
            )
        return "task"
    if len(tasks) == 1:
        if pool == "hierarchical":
            raise InputError(
                f"`pool='hierarchical'` pools several subtasks, and the input has one task "
                f"({tasks[0]!r}): leave `pool` out."
            )
        return "task"
    return "hierarchical" if pool == "auto" else pool


def subtasks_text(tasks: tuple[str, ...]) -> str:
    """Name several subtasks as reports do: ``"3 subtasks (a, b, c)"``, the first three shown."""
    shown = ", ".join(tasks[:3]) + (", …" if len(tasks) > 3 else "")
    return f"{counted(len(tasks), 'subtask')} ({shown})"


def pooled_task(tasks: tuple[str, ...]) -> str:
    """Name the population of several tasks' items pooled: ``"3 tasks pooled (a, b, c)"``."""
    if len(tasks) == 1:
        return tasks[0]
    shown = ", ".join(tasks[:3]) + (", …" if len(tasks) > 3 else "")
    return f"{counted(len(tasks), 'task')} pooled ({shown})"


def pooled_pair(table: Any, a: str, b: str) -> PairedItems:
    """Return the items `a` and `b` share, every task's items pooled as one population.

    One task: :meth:`~isbetter.items.table.ItemTable.paired`. Several: each (task, item)
    is one item (and each (task, cluster) one cluster), a micro average over the tasks.
    """
    if len(table.tasks) == 1:
        return table.paired(a, b)
    return _pooled(list(table.subtasks(a, b).values()), table.tasks, a, b)


def _pooled(parts: list[PairedItems], tasks: tuple[str, ...], a: str, b: str) -> PairedItems:
    clustered = any(p.clusters is not None for p in parts)
    return PairedItems(
        task=pooled_task(tasks),
        system_a=a,
        system_b=b,
        items=np.concatenate([np.char.add(f"{p.task}/", p.items) for p in parts]),
        a=np.concatenate([p.a for p in parts]),
        b=np.concatenate([p.b for p in parts]),
        clusters=(
            np.concatenate(
                [
                    np.char.add(f"{p.task}/", p.clusters if p.clusters is not None else p.items)
                    for p in parts
                ]
            )
            if clustered
            else None
        ),
        runs=np.concatenate([p.runs for p in parts]),
        binary=all(p.binary for p in parts),
    )


def binary_counts(parts: dict[str, PairedItems]) -> pd.DataFrame:
    """Return the 2x2 counts of each subtask (``task, n11, n10, n01, n00``), checked binary.

    The counting is :func:`~isbetter.items.hierarchical.counts.count_subtasks`'s.

    Raises
    ------
    InputError
        A subtask's items are graded (or means over runs), or in clusters: the
        hierarchical paired model is of independent binary items.
    """
    for task, p in parts.items():
        if not p.binary:
            raise _not_binary(f"task {task!r}: the scores of {p.system_a!r} and {p.system_b!r}")
        if p.clusters is not None:
            raise _clustered(f"task {task!r}: the items")
    return count_subtasks(*stacked(parts))


def _not_binary(what: str) -> InputError:
    """Return the error for scores (`what`) the hierarchical model of binary items cannot take."""
    return InputError(
        f"{what} are not binary (graded, or the mean of several runs), and the hierarchical "
        "model over subtasks is of binary items; pool the subtasks' items with "
        "`pool='micro'` (the Bayesian bootstrap over all items) or compare one task at a time."
    )


def _clustered(what: str) -> InputError:
    """Return the error for items in clusters (`what`), which the hierarchical model cannot take."""
    return InputError(
        f"{what} are in clusters, and the hierarchical model over subtasks treats items as "
        "independent; pool the subtasks' items with `pool='micro'` (the Bayesian bootstrap "
        "resamples the clusters)."
    )


def matrix_counts(matrix: ItemMatrix, a: int, b: int) -> pd.DataFrame:
    """Return the subtask counts of systems `a` and `b` (column indices) of an item matrix.

    The same table as :func:`binary_counts` of binary items (a matrix whose
    :attr:`~isbetter.items.joint.ItemMatrix.binary` holds, without clusters), in sorted
    task order: :func:`~isbetter.items.hierarchical.counts.count_subtasks` of the two
    columns.

    Examples
    --------
    >>> m = ItemMatrix(("x", "y"), np.array([[1.0, 1], [1, 0], [0, 1], [0, 0], [1, 0]]),
    ...                np.array(["s", "s", "s", "s", "t"]), None)
    >>> matrix_counts(m, 0, 1).to_dict("list")
    {'task': ['s', 't'], 'n11': [1, 0], 'n10': [1, 1], 'n01': [1, 0], 'n00': [1, 0]}
    """
    return count_subtasks(matrix.tasks, matrix.scores[:, a], matrix.scores[:, b])


def hierarchical_pair(
    counts: pd.DataFrame,
    a: str,
    b: str,
    *,
    metric: str,
    rope: float,
    seed: int,
    draws: int | None = None,
    hdi_prob: float = 0.95,
    chains: int | None = None,
) -> Any:
    """Fit the hierarchical model to one pair's subtask counts; the result names its subtasks.

    The pair's result of :func:`compare_subtasks` without baselines or the per-subtask
    summaries (what a ranking keeps of each pair); `chains` None: the model's 4.
    """
    from isbetter.inference.sampling import Sampling
    from isbetter.items.hierarchical.model import hierarchical_items

    res = hierarchical_items(
        counts,
        rope=rope,
        system_a=a,
        system_b=b,
        metric=metric,
        hdi_prob=hdi_prob,
        draws=HIERARCHICAL_DRAWS if draws is None else draws,
        sampling=None if chains is None else Sampling(chains=chains),
        rng=seed,
    )
    return dataclasses.replace(res, dataset=subtasks_text(res.subtasks))


def graded_pair(parts: dict[str, PairedItems], model: str = "auto", **fit: Any) -> Any:
    """Fit graded (or clustered) items by the correlated-t model with rho = 0 (.graded).

    The pair's result of :func:`compare_subtasks` for graded items, without baselines or
    the per-subtask summaries (what a ranking keeps of each pair). `fit`: the keywords
    of :func:`hierarchical_pair` (`draws` None or left out: the default); `model`
    ``"exact"`` is refused (the model of independent binary items).
    """
    from isbetter.items.graded import hierarchical_graded

    if model == "exact":
        p = next(p for p in parts.values() if not p.binary or p.clusters is not None)
        what = "in clusters" if p.clusters is not None else "not binary"
        raise InputError(
            f"`model='exact'` is the model of independent binary items, and the items of task "
            f"{p.task!r} are {what}; leave `model` out (over subtasks: the hierarchical "
            "correlated-t model with rho = 0)."
        )
    draws = fit.get("draws")
    res = hierarchical_graded(
        parts, **{**fit, "draws": HIERARCHICAL_DRAWS if draws is None else draws}
    )
    return dataclasses.replace(res, dataset=subtasks_text(res.subtasks))


def _subtask_records(res: Any, hdi_prob: float) -> list[dict[str, Any]]:
    """Per subtask: counts, observed and shrunk difference (mean, HDI), JSON-safe and rounded."""
    frame = res.subtask_frame(hdi_prob)
    records = []
    for row in frame.to_dict("records"):
        records.append(
            {k: (round(float(v), _DECIMALS) if isinstance(v, float) else v) for k, v in row.items()}
        )
    return records


def compare_subtasks(
    table: Any,
    a: str,
    b: str,
    *,
    model: str = "auto",
    rope: float = 0.0,
    hdi_prob: float = 0.95,
    draws: int | None = None,
    resamples: int = 10_000,
    baselines: bool = True,
    rng: RNGLike = None,
    source: dict[str, Any] | None = None,
) -> Any:
    """Compare `a` and `b` over every task of `table` by the hierarchical model.

    The work of :func:`~isbetter.compare_items` for a table of several tasks (its
    parameters; `draws` per chain, 4 chains, default :data:`HIERARCHICAL_DRAWS`): binary
    items by the hierarchical paired model, graded items (or items in clusters) by the
    hierarchical correlated-t model with rho = 0 (:mod:`isbetter.items.graded`). The
    result's ``settings["subtasks"]`` holds each subtask's counts (graded: its number of
    units), observed difference and shrunk difference (posterior mean and HDI of mass
    `hdi_prob`), so that reports of its light form list them; the frequentist baselines
    are those of the subtasks' items pooled (McNemar on all the discordant pairs of
    binary items, ...; over clusters when given).
    """
    if model == "bootstrap":
        raise InputError(
            "`model='bootstrap'` pools the items of one population, and over subtasks the "
            "hierarchical model is fitted; for the Bayesian bootstrap over all the "
            "subtasks' items give `pool='micro'`."
        )
    parts = table.subtasks(a, b)
    graded = any(not p.binary or p.clusters is not None for p in parts.values())
    seed = resolve_seed(rng)
    metric = str(getattr(table, "metric", "score"))
    fit: dict[str, Any] = {
        "metric": metric,
        "rope": rope,
        "seed": seed,
        "draws": draws,
        "hdi_prob": hdi_prob,
    }
    if graded:
        res = graded_pair(parts, model, **fit)
    else:
        res = hierarchical_pair(binary_counts(parts), a, b, **fit)
    tests: tuple[Any, ...] = ()
    settings = {**res.settings, "subtasks": _subtask_records(res, hdi_prob)}
    if baselines:
        pooled = _pooled(list(parts.values()), table.tasks, a, b)
        stream = np.random.SeedSequence(seed)
        tests = item_baselines(
            pooled.a,
            pooled.b,
            pooled.clusters,
            binary=not graded,
            resamples=resamples,
            rng=np.random.default_rng(child(stream, 2)),
        )
        settings["resamples"] = resamples
    return dataclasses.replace(res, settings={**settings, **(source or {})}, tests=tests)
