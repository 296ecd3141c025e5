"""Per-subtask 2x2 counts of two models' binary item scores: counted, and checked.

:func:`count_subtasks` is the one place they are counted (an item table's
:meth:`~isbetter.items.table.ItemTable.subtask_counts`, the subtasks' route and the
ranking's item matrix all call it); :func:`subtask_counts` checks a table of counts
given to the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError

__all__ = ["COLUMNS", "SubtaskCounts", "count_subtasks", "subtask_counts"]

#: the columns a table of counts has: the subtask, then both right, only A, only B, neither
COLUMNS = ("task", "n11", "n10", "n01", "n00")


@dataclass(frozen=True)
class SubtaskCounts:
    """Counts of the items of each subtask by the two models' outcomes.

    Attributes
    ----------
    tasks : tuple of str
        Subtask names.
    table : numpy.ndarray
        Shape ``(n_subtasks, 4)``, integers: ``n11, n10, n01, n00``.
    """

    tasks: tuple[str, ...]
    table: np.ndarray

    @property
    def items(self) -> np.ndarray:
        """Items per subtask, :math:`N_t`."""
        return self.table.sum(axis=1)

    @property
    def discordant(self) -> np.ndarray:
        """Items exactly one model got right, :math:`D_t = n_{10} + n_{01}`."""
        return self.table[:, 1] + self.table[:, 2]

    @property
    def a_only(self) -> np.ndarray:
        """Items only A got right, :math:`n_{10}`."""
        return self.table[:, 1]

    @property
    def symmetric(self) -> bool:
        """Whether swapping A and B leaves the data unchanged (n10 = n01 everywhere)."""
        return bool(np.all(self.table[:, 1] == self.table[:, 2]))


def count_subtasks(tasks: Any, a: Any, b: Any) -> Any:
    """Return the 2x2 counts of binary scores per task (``task, n11, n10, n01, n00``).

    Parameters
    ----------
    tasks : array_like of str
        Each item's task.
    a, b : array_like of float
        Each item's score (0 or 1) by the two models, checked binary beforehand.

    Returns
    -------
    pandas.DataFrame
        One row per task, in sorted order (n10: only `a` right, n01: only `b` right).

    Examples
    --------
    >>> count_subtasks(["s", "s", "s", "s", "t"], [1, 1, 0, 0, 1], [1, 0, 1, 0, 0]).to_dict("list")
    {'task': ['s', 't'], 'n11': [1, 0], 'n10': [1, 1], 'n01': [1, 0], 'n00': [1, 0]}
    """
    import pandas as pd

    names, index = np.unique(np.asarray(tasks, dtype=str), return_inverse=True)
    x, y = np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64)
    cell = 2 * (1 - x) + (1 - y)  # 0: n11, 1: n10, 2: n01, 3: n00
    table = np.bincount(4 * index + cell, minlength=4 * names.size).reshape(-1, 4)
    frame = pd.DataFrame(table, columns=list(COLUMNS[1:]))
    frame.insert(0, "task", names.tolist())
    return frame


def subtask_counts(counts: Any) -> SubtaskCounts:
    """Check a DataFrame of counts (:data:`COLUMNS`) and return its :class:`SubtaskCounts`.

    Raises
    ------
    InputTypeError
        `counts` is not a pandas DataFrame.
    InputError
        A column is missing, a count is not a non-negative integer, a subtask is named
        twice or has no items, or there are no rows.
    """
    import pandas as pd

    if not isinstance(counts, pd.DataFrame):
        raise InputTypeError(
            "`counts` must be a pandas DataFrame with columns task, n11, n10, n01, n00 (one "
            f"row per subtask), got {type(counts).__name__}."
        )
    missing = [c for c in COLUMNS if c not in counts.columns]
    if missing:
        raise InputError(
            f"`counts` lacks the column(s) {', '.join(missing)}; it needs "
            f"{', '.join(COLUMNS)}, found {', '.join(map(str, counts.columns))}."
        )
    if len(counts) == 0:
        raise InputError("`counts` has no rows; it needs one row per subtask.")
    tasks = tuple(str(t) for t in counts["task"])
    repeated = sorted({t for t in tasks if tasks.count(t) > 1})
    if repeated:
        raise InputError(
            f"`counts` names the subtask(s) {', '.join(repeated)} more than once; "
            "give one row per subtask."
        )
    values = counts[list(COLUMNS[1:])].to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values) | (values < 0) | (values != np.round(values))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"`counts` must hold non-negative integer counts; subtask {tasks[row]!r} has "
            f"{COLUMNS[1 + col]} = {float(values[row, col])!r}."
        )
    table = values.astype(np.int64)
    empty = [t for t, n in zip(tasks, table.sum(axis=1), strict=True) if n == 0]
    if empty:
        raise InputError(f"`counts`: the subtask(s) {', '.join(empty)} have no items.")
    return SubtaskCounts(tasks=tasks, table=table)
