"""All the systems' mean scores at once: the Bayesian bootstrap over items of the score vectors.

A ranking of K language models on the same items needs one posterior that keeps
the pairing (DESIGN §4.3, "Many models"). Each item i carries the vector
``x_i = (x_i1, ..., x_iK)`` of the K systems' scores (0/1, or graded, or the mean
over runs); the Bayesian bootstrap (Rubin 1981) puts ``w ~ Dir(1, ..., 1)`` on the
N items and gives, per draw, every system's mean score at once::

    acc_k = sum_i w_i x_ik

— the α → 0 limit of a Dirichlet over the 2^K outcome patterns of binary items.
With clusters (items sharing a passage) the weights are over clusters c, with
sums ``S_ck`` and sizes ``n_c``: ``acc_k = sum_c w_c S_ck / sum_c w_c n_c``. Each
pair's difference ``acc_a - acc_b`` is then exactly the paired Bayesian bootstrap
of :mod:`isbetter.items.bootstrap` (same distribution), and within one draw the K
means are ordered, so P(best), the ranks and every pair come from one posterior.

Equal units (items, or clusters, with the same score vector and size) only enter
through their total weight, which is ``Dir(m_g)`` over the G distinct units with
multiplicities ``m_g`` (aggregation property): exact, and costs draws x G. Systems
with identical scores on every unit share one column, so their means are equal
in every draw, bit for bit.

Several tasks are pooled for now: each (task, item) is one item of one population
(a micro average over the tasks' items). The hierarchical model over subtasks
(DESIGN §4.3, "Many subtasks") is the principled alternative.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.validate import check_positive_int, counted
from isbetter.items import bootstrap

__all__ = ["ItemMatrix", "distinct_units", "item_matrix", "sample_means"]


@dataclass(frozen=True)
class ItemMatrix:
    """Every system's mean score per item (runs averaged), items of all tasks pooled.

    Attributes
    ----------
    systems : tuple of str
        The K systems, in the columns' order.
    scores : numpy.ndarray
        ``(N, K)``: each item's mean score (over its runs) per system.
    tasks : numpy.ndarray
        ``(N,)``: each item's task.
    clusters : numpy.ndarray or None
        ``(N,)``: each item's cluster, prefixed by its task; None without clusters.
    """

    systems: tuple[str, ...]
    scores: np.ndarray
    tasks: np.ndarray
    clusters: np.ndarray | None

    @property
    def n_items(self) -> int:
        """Number of items (pairs of task and item)."""
        return int(self.scores.shape[0])

    def task_means(self) -> pd.DataFrame:
        """Return each system's mean score per task: one row per task, one column per system."""
        frame = pd.DataFrame(self.scores, columns=list(self.systems))
        return frame.groupby(self.tasks, sort=True).mean()


def item_matrix(table: Any, systems: Sequence[str] | None = None) -> ItemMatrix:
    """Return the items × systems matrix of an :class:`~isbetter.items.table.ItemTable`.

    Each (task, item) is one item; a system's score on it is its mean over runs.

    Raises
    ------
    InputError
        A system lacks items the others have (the message names a system and an item,
        and the way out: common items), or an item's cluster differs between systems.
    """
    names = tuple(table.systems) if systems is None else tuple(systems)
    data = table.data.loc[table.data["system"].isin(names)]
    keys = ["task", "item"]
    wide = data.groupby([*keys, "system"], sort=True)["score"].mean().unstack("system")
    wide = wide.reindex(columns=list(names))
    missing = wide.isna().to_numpy()
    if missing.any():
        row, col = (int(i[0]) for i in np.nonzero(missing))
        task, item = wide.index[row]
        raise InputError(
            f"system {names[col]!r} has no score for item {item!r} of task {task!r}, which "
            f"other systems have ({counted(int(missing.sum()), 'score')} missing in all): a "
            "ranking compares the models on the same items; keep those every model has "
            "(common_items(), --common-items)"
        )
    clusters = None
    if table.has_clusters:
        per = data.groupby(keys, sort=True)["cluster"]
        if (per.nunique(dropna=False) > 1).any():
            task, item = per.nunique(dropna=False).pipe(lambda s: s[s > 1]).index[0]
            raise InputError(
                f"task {task!r}: item {item!r} is in different clusters for different "
                "systems (or in none for some): give every item one cluster, or none"
            )
        first = per.first().reindex(wide.index)
        clusters = np.asarray(
            [f"{t}\x00{c}" for (t, _), c in zip(first.index, first.to_numpy(), strict=True)]
        )
    return ItemMatrix(
        systems=names,
        scores=wide.to_numpy(dtype=float),
        tasks=wide.index.get_level_values("task").to_numpy(dtype=str),
        clusters=clusters,
    )


def _units(matrix: ItemMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the distinct units' score sums ``(G, K)``, sizes ``(G,)`` and multiplicities."""
    x = matrix.scores
    if matrix.clusters is None:
        sums, sizes = x, np.ones(x.shape[0])
    else:
        _, inverse = np.unique(matrix.clusters, return_inverse=True)
        sums = np.zeros((int(inverse.max()) + 1, x.shape[1]))
        np.add.at(sums, inverse, x)
        sizes = np.bincount(inverse).astype(float)
    table, counts = np.unique(np.column_stack([sums, sizes]), axis=0, return_counts=True)
    return table[:, :-1], table[:, -1], counts.astype(float)


def distinct_units(matrix: ItemMatrix) -> int:
    """Return how many distinct units (score vectors and sizes) the bootstrap weighs."""
    return int(_units(matrix)[2].size)


def sample_means(matrix: ItemMatrix, *, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draw every system's mean score at once: the Bayesian bootstrap over items (or clusters).

    Parameters
    ----------
    matrix : ItemMatrix
        The items × systems scores (:func:`item_matrix`).
    draws : int
        How many draws of the K means.
    rng : numpy.random.Generator
        Draws the Dirichlet weights (as Gamma variates).

    Returns
    -------
    numpy.ndarray
        ``(draws, K)``: per draw, each system's mean score on the population of items.

    Examples
    --------
    >>> m = ItemMatrix(("x", "y"), np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]),
    ...                np.array(["t"] * 3), None)
    >>> means = sample_means(m, draws=40_000, rng=np.random.default_rng(0))
    >>> np.round(means.mean(axis=0), 2).tolist()   # the observed means, 2/3 and 1/3
    [0.67, 0.33]
    """
    draws = check_positive_int(draws, "draws")
    sums, sizes, counts = _units(matrix)
    # systems with the same sums on every unit share a column: equal in every draw, exactly
    columns, inverse = np.unique(sums, axis=1, return_inverse=True)
    out = np.empty((draws, columns.shape[1]))
    block = max(1, bootstrap._BLOCK // counts.size)  # bounds the memory as there
    for start in range(0, draws, block):
        k = min(draws, start + block) - start
        w = rng.standard_gamma(counts, (k, counts.size))
        out[start : start + k] = (w @ columns) / (w @ sizes)[:, None]
    return out[:, np.asarray(inverse).reshape(-1)]
