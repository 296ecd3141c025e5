"""All the systems' mean scores at once: one posterior over the items' score vectors.

A ranking of K language models on the same items needs one posterior that keeps
the pairing (DESIGN §4.3, "Many models"). Each item i carries the vector
``x_i = (x_i1, ..., x_iK)`` of the K systems' scores (0/1, or graded, or the mean
over runs), and the population of items is a distribution P over such vectors;
each draw of P gives every system's mean score at once, ``acc_k = E_P[x_k]``, so
P(best), the ranks and every pair come from one posterior.

**Binary items** (one run, scores 0/1, no clusters): P has the Dirichlet process
posterior (Ferguson 1973)::

    P | x ~ DP(alpha G0 + sum_i delta_{x_i}),   G0 uniform on {0, 1}^K,   alpha = 4

which puts mass on outcome vectors no item showed. It is the exact paired model of
every pair at once: the map ``x -> (x_a, x_b)`` sends a DP to the DP of the mapped
measure, and G0's image is uniform on the 2 x 2 table, 4 x 1/4 = 1 per cell, so the
pair's cell probabilities are ``Dir(1 + n11, 1 + n10, 1 + n01, 1 + n00)`` — the model
of :mod:`isbetter.items.paired` (``P(acc_a > acc_b) = P(Beta(1 + n10, 1 + n01) > 1/2)``),
for every pair of the same draws. Each system alone: ``Beta(2 + right, 2 + wrong)``.
A system right on every one of n items is no longer best in every draw.

Sampling (exact up to a stated truncation): ``P = sum_i w_i delta_{x_i} + w_0 Q`` with
``(w_1, ..., w_n, w_0) ~ Dir(1, ..., 1, alpha)`` and ``Q ~ DP(alpha G0)`` independent
(the DP's conjugacy); Q by stick-breaking (Sethuraman 1994): sticks
``v_j = b_j prod_{l<j} (1 - b_l)``, ``b_j ~ Beta(1, alpha)``, atoms ``z_j ~ G0`` (K fair
coins), drawn until the mass left is below :data:`TRUNCATION` in every draw; that
mass goes to one more atom of G0. An exact draw differs only in how it
spreads the mass left (over a DP, not one atom), so every system's mean differs from
that coupled exact draw's by at most ``w_0 x mass left < 1e-6`` — far below any
Monte Carlo error (and the truncated means are unbiased: both spreads have mean 1/2).

**Graded items, means over runs, clusters** (``alpha = 0``): the Bayesian bootstrap
(Rubin 1981), ``w ~ Dir(1, ..., 1)`` on the N items and ``acc_k = sum_i w_i x_ik``; with
clusters (items sharing a passage) the weights are over clusters c, with sums
``S_ck`` and sizes ``n_c``: ``acc_k = sum_c w_c S_ck / sum_c w_c n_c``. This is the route
:func:`~isbetter.compare_items` takes for such a pair, and each pair's difference is
exactly its paired Bayesian bootstrap (:mod:`isbetter.items.bootstrap`, same
distribution). A table with any graded score (or several runs, or clusters) takes
this route for every pair: one posterior has one prior, and a prior on unseen
outcomes would move the graded pairs away from their bootstrap.

Equal units (items, or clusters, with the same score vector and size) only enter
through their total weight, which is ``Dir(m_g)`` over the G distinct units with
multiplicities ``m_g`` (aggregation property): exact, and costs draws x G. In the
bootstrap, systems with identical scores on every unit share one column, so their
means are equal in every draw, bit for bit; under the DP prior they may differ on
unseen items, as their exact pair says (a posterior of the difference symmetric
about 0, equal in distribution, not draw by draw).

**Several subtasks** (:func:`sample_subtask_means`): the population is one of subtasks,
each with its own population of items, and the quantity is each system's mean over the
population of subtasks of its mean score on a subtask (every subtask weighted equally) —
what the pairwise route's hierarchical model over subtasks estimates as its population
mean difference. A two-level Bayesian bootstrap draws it::

    u ~ Dir(1, ..., 1) over the T subtasks,     acc_k = sum_t u_t acc_tk

with ``acc_tk`` drawn within subtask t as above (over its items or clusters: the
Bayesian bootstrap, or for binary items the Dirichlet process, whose draws give a
subtask the posterior the one-task route gives it). Without the prior (graded items)
``E[acc_k]`` is the mean of the subtasks' observed means. Pooling every (task, item) as one
item of one population instead (:func:`sample_means` of the whole matrix) is the micro
average over the tasks' items, in which a large subtask weighs as much as its items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.validate import check_positive_int, counted
from isbetter.core.vocabulary import task_text
from isbetter.items import bootstrap, paired

__all__ = [
    "BINARY_ALPHA",
    "TRUNCATION",
    "ItemMatrix",
    "distinct_units",
    "item_matrix",
    "prior_alpha",
    "prior_record",
    "sample_means",
    "sample_subtask_means",
]

#: the Dirichlet process's concentration for binary items: its base, uniform on {0,1}^K,
#: gives every pair's 2 x 2 table ``BINARY_ALPHA / 4`` per cell, the exact model's Dir(1,1,1,1)
BINARY_ALPHA = 4.0 * paired.ALPHA
#: the mass of the base part's stick-breaking left undrawn, at most, in every draw
TRUNCATION = 1e-6
#: sticks drawn at a time, for the draws whose mass left is not yet below TRUNCATION
_STICKS = 32


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
    binary : bool, default: False
        Every score is one run's 0 or 1 (:func:`item_matrix` sets it): the items the
        exact paired model takes, and the Dirichlet process prior here.
    """

    systems: tuple[str, ...]
    scores: np.ndarray
    tasks: np.ndarray
    clusters: np.ndarray | None
    binary: bool = False

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
    grouped = data.groupby([*keys, "system"], sort=True)["score"]
    wide = grouped.mean().unstack("system").reindex(columns=list(names))
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
                f"{task_text(task, quoted=True)}: item {item!r} is in different clusters for "
                "different systems (or in none for some): give every item one cluster, or none"
            )
        first = per.first().reindex(wide.index)
        clusters = np.asarray(
            [f"{t}\x00{c}" for (t, _), c in zip(first.index, first.to_numpy(), strict=True)]
        )
    scores = wide.to_numpy(dtype=float)
    return ItemMatrix(
        systems=names,
        scores=scores,
        tasks=wide.index.get_level_values("task").to_numpy(dtype=str),
        clusters=clusters,
        # as ItemTable.paired: one run per item and system, each 0 or 1
        binary=bool((grouped.size() == 1).all() and np.isin(scores, (0.0, 1.0)).all()),
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


def prior_alpha(matrix: ItemMatrix) -> float:
    """Return the Dirichlet process's concentration: :data:`BINARY_ALPHA` or 0 (the bootstrap).

    Binary items without clusters take the prior that makes every pair the exact
    paired model; anything else the Bayesian bootstrap, as :func:`~isbetter.compare_items`.
    """
    return BINARY_ALPHA if matrix.binary and matrix.clusters is None else 0.0


def prior_record(matrix: ItemMatrix) -> dict[str, Any]:
    """Return what the settings record of the prior over unseen outcomes: alpha and base."""
    alpha = prior_alpha(matrix)
    if not alpha:
        why = "clusters" if matrix.clusters is not None else "graded scores or several runs"
        return {
            "alpha": 0.0,
            "base": f"none: the Bayesian bootstrap over the items seen ({why})",
        }
    k = len(matrix.systems)
    return {
        "alpha": alpha,
        "base": f"uniform on {{0,1}}^{k}: Dir(1, 1, 1, 1) on every pair's 2x2 table",
        "truncation": TRUNCATION,
    }


def _coins(rng: np.random.Generator, shape: tuple[int, ...], systems: int) -> np.ndarray:
    """Fair 0/1 coins, ``shape + (systems,)`` (uint8): atoms of G0, from random bytes."""
    per = -(-systems // 8)
    raw = np.frombuffer(rng.bytes(int(np.prod(shape)) * per), dtype=np.uint8)
    return np.unpackbits(raw.reshape(*shape, per), axis=-1, count=systems)


def _base_means(k: int, systems: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Draw the K means of ``Q ~ DP(alpha G0)``, G0 uniform on {0,1}^K: ``(k, systems)``.

    Stick-breaking: ``-log(1 - b_j) ~ Exp(alpha)`` for ``b_j ~ Beta(1, alpha)``, so the
    mass left after j sticks is ``exp(-(E_1 + ... + E_j) / alpha)``; sticks are drawn
    :data:`_STICKS` at a time for the rows where it is not yet below :data:`TRUNCATION`,
    and what is left goes to one more atom of G0.
    """
    means = np.zeros((k, systems))
    spent = np.zeros(k)  # -log of the mass left
    rows = np.arange(k)  # the draws whose mass left is not yet below TRUNCATION
    while rows.size:
        e = rng.standard_exponential((rows.size, _STICKS)) / alpha
        cum = np.cumsum(e, axis=1)
        cum += spent[rows, None]
        sticks = np.exp(e - cum) * -np.expm1(-e)  # mass left before the stick x its share
        means[rows] += np.einsum("dj,djk->dk", sticks, _coins(rng, (rows.size, _STICKS), systems))
        spent[rows] = cum[:, -1]
        rows = rows[cum[:, -1] <= -np.log(TRUNCATION)]
    means += np.exp(-spent)[:, None] * _coins(rng, (k,), systems)
    return means


def sample_means(matrix: ItemMatrix, *, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draw every system's mean score at once (DP posterior, or the Bayesian bootstrap).

    Binary items: the Dirichlet process posterior with the prior of :func:`prior_alpha`
    over unseen outcome vectors; otherwise the Bayesian bootstrap over items (or
    clusters). See the module's notes.

    Parameters
    ----------
    matrix : ItemMatrix
        The items × systems scores (:func:`item_matrix`).
    draws : int
        How many draws of the K means.
    rng : numpy.random.Generator
        Draws the Dirichlet weights (as Gamma variates) and the base's sticks and atoms.

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
    >>> binary = ItemMatrix(m.systems, m.scores, m.tasks, None, binary=True)
    >>> means = sample_means(binary, draws=40_000, rng=np.random.default_rng(0))
    >>> np.round(means.mean(axis=0), 2).tolist()   # Beta(2 + 2, 2 + 1), Beta(2 + 1, 2 + 2)
    [0.57, 0.43]
    """
    draws = check_positive_int(draws, "draws")
    sums, sizes, counts = _units(matrix)
    alpha = prior_alpha(matrix)
    if alpha:
        return _dp_means(sums, sizes, counts, alpha, draws, rng)
    # systems with the same sums on every unit share a column: equal in every draw, exactly
    columns, inverse = np.unique(sums, axis=1, return_inverse=True)
    out = np.empty((draws, columns.shape[1]))
    block = max(1, bootstrap._BLOCK // counts.size)  # bounds the memory as there
    for start in range(0, draws, block):
        k = min(draws, start + block) - start
        w = rng.standard_gamma(counts, (k, counts.size))
        out[start : start + k] = (w @ columns) / (w @ sizes)[:, None]
    return out[:, np.asarray(inverse).reshape(-1)]


def _dp_means(
    sums: np.ndarray,
    sizes: np.ndarray,
    counts: np.ndarray,
    alpha: float,
    draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draws of the K means under ``DP(alpha G0 + sum_i delta_{x_i})`` (binary items)."""
    systems = sums.shape[1]
    out = np.empty((draws, systems))
    block = max(1, bootstrap._BLOCK // (counts.size + 1 + _STICKS * systems))
    for start in range(0, draws, block):
        k = min(draws, start + block) - start
        num, den = bootstrap.weighted_sums(sums, sizes, counts, k, rng)  # the items' weights
        w0 = rng.standard_gamma(alpha, k)  # the base's: (w, w0) ~ Dir(counts, alpha)
        num += w0[:, None] * _base_means(k, systems, alpha, rng)
        out[start : start + k] = num / (den + w0)[:, None]
    return out


def sample_subtask_means(matrix: ItemMatrix, *, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draw every system's mean over the population of subtasks: a two-level bootstrap.

    ``u ~ Dir(1, ..., 1)`` over the subtasks (drawn first, as normalised Exp(1)
    variates), then each subtask's means in sorted task order as :func:`sample_means`
    draws them for that subtask alone (the prior of :func:`prior_alpha` of the whole
    matrix), all from `rng`; each draw is ``sum_t u_t acc_t``. See the module's notes.

    Returns
    -------
    numpy.ndarray
        ``(draws, K)``: per draw, each system's mean score over the population of
        subtasks (the mean of its subtask means, every subtask weighted equally).

    Examples
    --------
    >>> x = np.array([[1.0, 0.0]] * 8 + [[0.0, 1.0]] * 2 + [[0.0, 1.0]] * 2)
    >>> m = ItemMatrix(("a", "b"), x, np.array(["big"] * 10 + ["small"] * 2), None)
    >>> np.round(m.scores.mean(axis=0), 2).tolist()   # the items pooled: a ahead
    [0.67, 0.33]
    >>> means = sample_subtask_means(m, draws=40_000, rng=np.random.default_rng(0))
    >>> np.round(means.mean(axis=0), 2).tolist()   # subtasks' means (0.8, 0), (0.2, 1)
    [0.4, 0.6]
    """
    draws = check_positive_int(draws, "draws")
    tasks = np.unique(matrix.tasks)
    u = rng.standard_exponential((draws, tasks.size))
    u /= u.sum(axis=1, keepdims=True)
    out = np.zeros((draws, len(matrix.systems)))
    for t, task in enumerate(tasks):
        rows = matrix.tasks == task
        part = ItemMatrix(
            matrix.systems,
            matrix.scores[rows],
            matrix.tasks[rows],
            None if matrix.clusters is None else matrix.clusters[rows],
            matrix.binary,
        )
        out += u[:, t, None] * sample_means(part, draws=draws, rng=rng)
    return out
