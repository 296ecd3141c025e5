"""One item-level table of language-model evaluations: task, item, system, run, score.

Every reader of :mod:`isbetter.items` returns an :class:`ItemTable`; the paired and
hierarchical models take the items two systems share from it
(:meth:`ItemTable.paired`, :meth:`ItemTable.subtasks`, :meth:`ItemTable.subtask_counts`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import counted
from isbetter.core.vocabulary import ONE_TASK, task_text

__all__ = ["COLUMNS", "ItemTable", "PairedItems", "stacked"]

#: the columns of :attr:`ItemTable.frame`, in this order
COLUMNS = ("task", "item", "system", "run", "score", "cluster")


_KEY = ["task", "item", "system", "run"]


def _examples(values: Iterable[Any], k: int = 3) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:k])
    return shown + (", …" if len(values) > k else "")


def _check_columns(df: pd.DataFrame, **names: str | Sequence[str] | None) -> None:
    """Raise naming the argument when a column it names is not in `df`."""
    for argument, columns in names.items():
        for column in [columns] if isinstance(columns, str) else columns or ():
            if column not in df.columns:
                raise InputError(
                    f"`{argument}`: no column {column!r}; the columns are "
                    f"{', '.join(map(repr, map(str, df.columns)))}"
                )


def _as_labels(column: pd.Series, name: str) -> pd.Series:
    """Return a column as strings (numbers as written: 3 → "3", 3.0 → "3")."""
    if column.isna().any():
        row = int(np.flatnonzero(column.isna().to_numpy())[0])
        raise InputError(f"`{name}` is missing in row {row}: every row needs a {name}")
    if pd.api.types.is_float_dtype(column):
        values = column.to_numpy()
        if np.all(values == np.round(values)):
            return pd.Series(values.astype(np.int64).astype(str), index=column.index)
    return column.astype(str)


@dataclass(frozen=True)
class PairedItems:
    """The items two systems share on one task, each averaged over its runs.

    Attributes
    ----------
    task : str
        The task.
    system_a, system_b : str
        The two systems.
    items : numpy.ndarray
        Item ids (strings), in the table's order.
    a, b : numpy.ndarray
        Per item, the mean score of system a and of system b over their runs.
    clusters : numpy.ndarray or None
        Per item, its cluster (strings); None when the table has no clusters.
    runs : numpy.ndarray
        Integer array of shape (items, 2): the runs of system a and of system b per item.
    binary : bool
        True when every item has one run per system and every score is 0 or 1, so the
        exact paired model for binary items applies.
    """

    task: str
    system_a: str
    system_b: str
    items: np.ndarray = field(repr=False)
    a: np.ndarray = field(repr=False)
    b: np.ndarray = field(repr=False)
    clusters: np.ndarray | None = field(repr=False)
    runs: np.ndarray = field(repr=False)
    binary: bool = False

    def __len__(self) -> int:
        """Return the number of items."""
        return len(self.items)

    @property
    def n(self) -> int:
        """Number of items."""
        return len(self.items)

    def check_binary(self) -> None:
        """Raise :class:`~isbetter.core.errors.InputError` unless the items are binary."""
        if not self.binary:
            raise InputError(
                f"{task_text(self.task, quoted=True)}: the scores of {self.system_a!r} and "
                f"{self.system_b!r} are not binary (one run per item, 0 or 1): no 2x2 counts"
            )

    def counts(self) -> tuple[int, int, int, int]:
        """Return the 2x2 counts (n11, n10, n01, n00) of binary items.

        n11: both right, n10: only system a, n01: only system b, n00: neither.

        Raises
        ------
        InputError
            The items are not binary (graded scores or several runs).
        """
        self.check_binary()
        a = self.a.astype(bool)
        b = self.b.astype(bool)
        return (
            int(np.sum(a & b)),
            int(np.sum(a & ~b)),
            int(np.sum(~a & b)),
            int(np.sum(~a & ~b)),
        )


@dataclass(frozen=True)
class ItemTable:
    """Per-item scores of systems (language models) on tasks, validated.

    Parameters
    ----------
    data : pandas.DataFrame
        Long form with the columns ``task``, ``item``, ``system`` (str), ``run``
        (int, 0 when one run), ``score`` (float) and ``cluster`` (str or missing; the
        column may be absent). The table keeps a normalised copy.
    metric : str
        What the score is (``"acc"``, ``"exact_match"``, ``"score"``).
    source : str
        Short provenance: the files read, the metric and filter chosen.
    notes : tuple of str
        Choices made while reading (runs dropped, columns skipped), each a sentence.
    groups : mapping of str to tuple of str
        Groups of tasks (lm-evaluation-harness's ``group_subtasks``: ``mmlu`` → its 57
        subjects), flattened to the table's tasks; groups with no task here are dropped.

    Raises
    ------
    InputError
        A column is missing, a score is missing or not a finite number (the message
        names the row), or a (task, item, system, run) occurs twice.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 2, 1, 2], "system": ["x", "x", "y", "y"],
    ...                    "score": [1, 0, 1, 1]})
    >>> table = ItemTable.from_frame(df, task=None, metric="acc")
    >>> table.systems, table.tasks
    (('x', 'y'), ('all',))
    >>> table.paired("x", "y").counts()
    (1, 0, 1, 0)
    """

    data: pd.DataFrame = field(repr=False)
    metric: str = "score"
    source: str = ""
    notes: tuple[str, ...] = ()
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check and normalise the frame (a copy; the caller's frame is left alone)."""
        if not isinstance(self.data, pd.DataFrame):
            raise InputTypeError(
                f"`data` must be a pandas DataFrame, got {type(self.data).__name__}"
            )
        object.__setattr__(self, "data", _normalise(self.data))
        object.__setattr__(self, "notes", tuple(self.notes))
        tasks = set(self.data["task"].unique())
        groups = {str(g): tuple(sorted(set(map(str, ts)) & tasks)) for g, ts in self.groups.items()}
        object.__setattr__(self, "groups", {g: ts for g, ts in groups.items() if ts})

    def __eq__(self, other: object) -> bool:
        """Equal frames, metric, source and notes."""
        if not isinstance(other, ItemTable):
            return NotImplemented
        return (
            self.metric == other.metric
            and self.source == other.source
            and self.notes == other.notes
            and dict(self.groups) == dict(other.groups)
            and self.data.equals(other.data)
        )

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        """Return the number of rows (task, item, system, run)."""
        return len(self.data)

    def __repr__(self) -> str:
        """Show the counts, not the rows."""
        items = self.data.groupby("task", sort=False)["item"].nunique().sum()
        return (
            f"ItemTable({counted(len(self.systems), 'system')}, "
            f"{counted(len(self.tasks), 'task')}, {counted(int(items), 'item')}, "
            f"metric={self.metric!r}, source={self.source!r})"
        )

    # ----------------------------------------------------------------- views
    @property
    def frame(self) -> pd.DataFrame:
        """The long table (a copy): task, item, system, run, score, cluster."""
        return self.data.copy()

    # systems and tasks are computed once (pairing 57 subtasks of a 20-model table asked
    # for them 174 times: 1.2 of its 2.7 s)
    @functools.cached_property
    def systems(self) -> tuple[str, ...]:
        """The systems, sorted."""
        return tuple(sorted(self.data["system"].unique()))

    @functools.cached_property
    def tasks(self) -> tuple[str, ...]:
        """The tasks, sorted."""
        return tuple(sorted(self.data["task"].unique()))

    @property
    def has_clusters(self) -> bool:
        """Whether any row has a cluster."""
        return bool(self.data["cluster"].notna().any())

    @functools.cached_property
    def _rows_of(self) -> dict[tuple[str, str], np.ndarray]:
        # row positions of each (task, system), in table order; computed once
        grouped = self.data.groupby(["task", "system"], sort=False).indices
        return {(str(t), str(s)): np.asarray(rows) for (t, s), rows in grouped.items()}

    # ----------------------------------------------------------- building
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        task: str | None = "task",
        item: str = "item",
        system: str = "system",
        run: str | None = None,
        score: str = "score",
        cluster: str | None = None,
        metric: str | None = None,
        source: str = "a data frame (long form)",
        notes: Sequence[str] = (),
    ) -> ItemTable:
        """Build a table from a long data frame: one row per (task, item, system, run).

        Parameters
        ----------
        df : pandas.DataFrame
            The scores.
        task, item, system, run, score, cluster : str or None
            The names of the columns. ``task=None``: one task, named ``"all"``;
            ``run=None``: one run per (task, item, system), numbered 0;
            ``cluster=None``: no clusters.
        metric : str, optional
            What the score is; default the score column's name.
        source, notes : str, sequence of str
            Provenance, kept in the table.

        Returns
        -------
        ItemTable

        Raises
        ------
        InputError
            A named column is missing (the message lists those present), or the
            rows fail the table's checks.
        """
        if not isinstance(df, pd.DataFrame):
            raise InputTypeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}")
        _check_columns(
            df, task=task, item=item, system=system, run=run, score=score, cluster=cluster
        )
        n = len(df)
        out = pd.DataFrame(
            {
                "task": df[task].to_numpy() if task is not None else np.full(n, ONE_TASK),
                "item": df[item].to_numpy(),
                "system": df[system].to_numpy(),
                "run": df[run].to_numpy() if run is not None else np.zeros(n, np.int64),
                "score": df[score].to_numpy(),
                "cluster": df[cluster].to_numpy() if cluster is not None else None,
            }
        )
        return cls(out, metric=metric or score, source=source, notes=tuple(notes))

    @classmethod
    def from_wide(
        cls,
        df: pd.DataFrame,
        *,
        item: str,
        task: str | None = None,
        systems: Sequence[str] | None = None,
        cluster: str | None = None,
        run_suffix: bool = False,
        metric: str = "score",
        source: str = "a data frame (items x systems)",
        notes: Sequence[str] = (),
    ) -> ItemTable:
        """Build a table from a wide data frame: one row per item, one column per system.

        Parameters
        ----------
        df : pandas.DataFrame
            The scores.
        item : str
            The column of item ids.
        task : str, optional
            The column of tasks; None: one task, named ``"all"``.
        systems : sequence of str, optional
            The system columns; default every other column (except `task` and
            `cluster`) that holds numbers. A column with no number at all (AIME's
            answers, a reference output) is skipped and the skip is recorded in
            the table's notes; a column with some numbers and some text is an error.
        cluster : str, optional
            The column of clusters.
        run_suffix : bool
            Item ids ``"<item>.<k>"`` are run k of item ``<item>`` and a bare ``"<item>"``
            is run 0 (MathArena's AIME table: rows ``1, 1.1, 1.2, 1.3`` are problem 1,
            runs 0–3). Read the item column as text (``dtype=str``): ``1.10`` read as a
            number is ``1.1``.
        metric, source, notes : str, str, sequence of str
            Kept in the table.

        Returns
        -------
        ItemTable

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"Question": ["1", "1.1", "2", "2.1"],
        ...                    "m1": [1, 1, 0, 1], "m2": [0, 1, 0, 0]})
        >>> t = ItemTable.from_wide(df, item="Question", run_suffix=True)
        >>> t.paired("m1", "m2").runs.tolist()
        [[2, 2], [2, 2]]
        """
        if not isinstance(df, pd.DataFrame):
            raise InputTypeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}")
        fixed = [c for c in (item, task, cluster) if c is not None]
        _check_columns(df, item=item, task=task, cluster=cluster)
        notes = list(notes)
        if systems is None:
            systems = []
            for column in df.columns:
                if column in fixed:
                    continue
                numbers = pd.to_numeric(df[column], errors="coerce")
                if numbers.notna().any() or df[column].isna().all():
                    systems.append(column)
                else:
                    notes.append(f"column {str(column)!r} holds no numbers: not a system, skipped")
        else:
            _check_columns(df, systems=systems)
        if not systems:
            raise InputError("`df` has no system column (a column of scores beside the items)")
        keep = fixed + list(systems)
        long = df[keep].melt(id_vars=fixed, var_name="_system", value_name="_score")
        items = _as_labels(long[item], "item")
        runs = np.zeros(len(long), np.int64)
        if run_suffix:
            parts = items.str.extract(r"^(?P<item>.+?)(?:\.(?P<run>\d+))?$")
            items = parts["item"]
            runs = parts["run"].fillna("0").astype(np.int64).to_numpy()
        long = long.assign(_item=items.to_numpy(), _run=runs)
        return cls.from_frame(
            long,
            task=task,
            item="_item",
            system="_system",
            run="_run",
            score="_score",
            cluster=cluster,
            metric=metric,
            source=source,
            notes=notes,
        )

    # ----------------------------------------------------------- selecting
    def restrict(
        self,
        *,
        task: str | Sequence[str] | None = None,
        systems: Sequence[str] | None = None,
        group: str | None = None,
    ) -> ItemTable:
        """Return the table of some tasks and/or some systems.

        Parameters
        ----------
        task : str or sequence of str, optional
            The task(s) to keep; default all.
        group : str, optional
            Keep the tasks of this group (see `groups`).
        systems : sequence of str, optional
            The systems to keep; default all.

        Raises
        ------
        InputError
            A task or system is not in the table (the message lists those present).
        """
        keep = np.ones(len(self.data), bool)
        if group is not None:
            if group not in self.groups:
                known = ", ".join(self.groups) or "none"
                raise InputError(f"`group`: no group {group!r}; the table's groups: {known}")
            keep &= self.data["task"].isin(self.groups[group]).to_numpy()
        if task is not None:
            tasks = [task] if isinstance(task, str) else list(task)
            for t in tasks:
                self._check_task(t)
            keep &= self.data["task"].isin(tasks).to_numpy()
        if systems is not None:
            systems = [systems] if isinstance(systems, str) else list(systems)
            for s in systems:
                self._check_system(s)
            keep &= self.data["system"].isin(systems).to_numpy()
        return ItemTable(
            self.data.loc[keep].reset_index(drop=True),
            metric=self.metric,
            source=self.source,
            notes=self.notes,
            groups=self.groups,
        )

    def common_items(self) -> ItemTable:
        """Return the table of the items every system has on each task; the drop is noted.

        Two logs of one benchmark often cover different items (one run was cut short,
        another used a larger sample): only the shared items pair. Each task's dropped
        items are counted in the returned table's notes; a task some system lacks
        altogether is kept (pairing it is an error that names it).
        """
        data = self.data
        per_task = data.groupby("task", sort=True)["system"].nunique()
        have = data.groupby(["task", "item"], sort=False)["system"].nunique()
        full = have.to_numpy() == per_task.loc[have.index.get_level_values("task")].to_numpy()
        keep_items = have.index[full]
        index = pd.MultiIndex.from_frame(data[["task", "item"]])
        keep = index.isin(keep_items)
        notes = list(self.notes)
        kept = pd.Series(full, index=have.index).groupby(level="task").sum()
        for task, dropped in data.loc[~keep].groupby("task", sort=True):
            notes.append(
                f"{task}: kept the {counted(int(kept[task]), 'item')} "
                f"every system has; dropped {counted(dropped['item'].nunique(), 'item')} "
                f"({_examples(pd.unique(dropped['item']))}) some systems lack"
            )
        return ItemTable(
            data.loc[keep].reset_index(drop=True),
            metric=self.metric,
            source=self.source,
            notes=tuple(notes),
            groups=self.groups,
        )

    def _check_system(self, system: str) -> None:
        if system not in self.systems:
            raise InputError(
                f"no system {system!r} in the table; its systems: {_examples(self.systems, 8)}"
            )

    def _check_task(self, task: str) -> None:
        if task not in self.tasks:
            raise InputError(
                f"no task {task!r} in the table; its tasks: {_examples(self.tasks, 8)}"
            )

    def _one_task(self, task: str | None) -> str:
        if task is not None:
            self._check_task(task)
            return task
        if len(self.tasks) > 1:
            raise InputError(
                f"the table has {counted(len(self.tasks), 'task')} ({_examples(self.tasks)}): "
                "name one with `task`, or pool them over subtasks"
            )
        return self.tasks[0]

    def _system_rows(self, task: str, system: str) -> pd.DataFrame:
        rows = self._rows_of.get((task, system))
        if rows is None:
            have = sorted(t for t, s in self._rows_of if s == system)
            raise InputError(
                f"system {system!r} has no items of task {task!r} "
                f"(it has {counted(len(have), 'task')}: {_examples(have)})"
            )
        return self.data.iloc[rows]

    def paired(self, a: str, b: str, task: str | None = None) -> PairedItems:
        """Return the items systems `a` and `b` both have on one task, averaged over runs.

        Parameters
        ----------
        a, b : str
            The two systems.
        task : str, optional
            The task; may be omitted when the table has one.

        Returns
        -------
        PairedItems

        Raises
        ------
        InputError
            A system or task is not in the table, a system has no items of the task,
            the two systems have different items (the message gives the counts), or
            an item's cluster differs between the systems.
        """
        self._check_system(a)
        self._check_system(b)
        if a == b:
            raise InputError(f"`a` and `b` are both {a!r}: name two different systems")
        task = self._one_task(task)
        per = [_per_item(self._system_rows(task, s)) for s in (a, b)]
        items_a, items_b = per[0].index, per[1].index
        if len(items_a) != len(items_b) or (items_b.get_indexer(items_a) < 0).any():
            only_a = items_a.difference(items_b)
            only_b = items_b.difference(items_a)
            only = "; ".join(
                f"only {s!r}: {_examples(o)}" for s, o in ((a, only_a), (b, only_b)) if len(o)
            )
            raise InputError(
                f"{task_text(task, quoted=True)}: {a!r} has {counted(len(items_a), 'item')} and "
                f"{b!r} {len(items_b)}, {len(items_a) - len(only_a)} in common ({only}); compare "
                "models on the same items (common_items() keeps those every system has)"
            )
        pa, pb = per[0], per[1].loc[items_a]
        clusters = None
        if pa["cluster"].notna().any() or pb["cluster"].notna().any():
            ca, cb = pa["cluster"].to_numpy(), pb["cluster"].to_numpy()
            if pd.isna(ca).any():
                missing = items_a[pd.isna(ca)]
                raise InputError(
                    f"{task_text(task, quoted=True)}: {counted(len(missing), 'item')} of {a!r} "
                    f"have no cluster ({_examples(missing)}): give every item a cluster or none"
                )
            differ = (ca != cb) & ~pd.isna(cb)
            if differ.any():
                raise InputError(
                    f"task {task!r}: item {items_a[differ][0]!r} is in cluster "
                    f"{ca[differ][0]!r} for {a!r} but {cb[differ][0]!r} for {b!r}"
                )
            clusters = ca.astype(str)
        runs = np.column_stack([pa["runs"].to_numpy(), pb["runs"].to_numpy()])
        binary = bool(
            np.all(runs == 1)
            and np.isin(pa["score"].to_numpy(), (0.0, 1.0)).all()
            and np.isin(pb["score"].to_numpy(), (0.0, 1.0)).all()
        )
        return PairedItems(
            task=task,
            system_a=a,
            system_b=b,
            items=items_a.to_numpy(dtype=str),
            a=pa["score"].to_numpy(dtype=float),
            b=pb["score"].to_numpy(dtype=float),
            clusters=clusters,
            runs=runs.astype(np.int64),
            binary=binary,
        )

    def subtasks(self, a: str, b: str) -> dict[str, PairedItems]:
        """Return :meth:`paired` for every task, in sorted task order.

        Raises
        ------
        InputError
            As :meth:`paired`, naming the first task where it fails (a task only one
            of the systems has, different items).
        """
        self._check_system(a)
        self._check_system(b)
        return {task: self.paired(a, b, task) for task in self.tasks}

    def subtask_counts(self, a: str, b: str) -> pd.DataFrame:
        """Return per task the items and the 2x2 counts of binary items.

        Returns
        -------
        pandas.DataFrame
            Columns ``task``, ``n``, ``n11``, ``n10``, ``n01``, ``n00``, one row per
            task in sorted order (n10: only `a` right, n01: only `b` right).

        Raises
        ------
        InputError
            As :meth:`subtasks`, or a task's scores are not binary (named).
        """
        from isbetter.items.hierarchical.counts import count_subtasks

        parts = self.subtasks(a, b)
        for pair in parts.values():
            pair.check_binary()
        frame = count_subtasks(*stacked(parts))
        frame.insert(1, "n", [p.n for p in parts.values()])
        return frame


def stacked(parts: Mapping[str, PairedItems]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the items of several tasks' pairs end to end: each item's task, a, b."""
    pairs = list(parts.values())
    return (
        np.concatenate([np.full(p.n, task) for task, p in parts.items()]),
        np.concatenate([p.a for p in pairs]),
        np.concatenate([p.b for p in pairs]),
    )


def _per_item(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean score, number of runs and the cluster of each item, in first-seen order."""
    grouped = rows.groupby("item", sort=False)
    out = pd.DataFrame({"score": grouped["score"].mean(), "runs": grouped["score"].size()})
    out["cluster"] = grouped["cluster"].first()
    return out


def _normalise(data: pd.DataFrame) -> pd.DataFrame:
    """Check the long frame and return it with canonical dtypes and order."""
    missing = [c for c in COLUMNS if c != "cluster" and c not in data.columns]
    if missing:
        raise InputError(
            f"`data` lacks the column(s) {', '.join(map(repr, missing))}; "
            f"it has {', '.join(map(repr, map(str, data.columns)))}"
        )
    if len(data) == 0:
        raise InputError("`data` has no rows: nothing to compare")
    out = pd.DataFrame(
        {
            "task": _as_labels(data["task"], "task").to_numpy(),
            "item": _as_labels(data["item"], "item").to_numpy(),
            "system": _as_labels(data["system"], "system").to_numpy(),
        }
    )
    run = pd.to_numeric(data["run"], errors="coerce").to_numpy()
    bad_run = np.isnan(run) | (run != np.round(run)) | (run < 0)
    if bad_run.any():
        row = int(np.flatnonzero(bad_run)[0])
        raise InputError(
            f"row {row} ({_where(out, row)}): run {data['run'].iloc[row]!r} is not an integer >= 0"
        )
    out["run"] = run.astype(np.int64)
    score = pd.to_numeric(data["score"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(score)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"row {row} ({_where(out, row)}): score {data['score'].iloc[row]!r} is not a "
            f"finite number ({counted(int(bad.sum()), 'row')} like it); "
            "drop or fix those items explicitly"
        )
    out["score"] = score
    if "cluster" in data.columns:
        cluster = data["cluster"].to_numpy(dtype=object, copy=True)
        present = ~pd.isna(cluster)
        cluster[present] = [str(c) for c in cluster[present]]
        cluster[~present] = None
        out["cluster"] = cluster
    else:
        out["cluster"] = np.full(len(out), None, dtype=object)
    duplicated = out.duplicated(_KEY)
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise InputError(
            f"row {row} ({_where(out, row)}) occurs twice "
            f"({counted(int(duplicated.sum()), 'repeated row')}): one score per "
            "(task, item, system, run); number repeated runs in a run column"
        )
    # canonical order: tasks, systems and runs sorted; items in their first-seen order
    out = out.sort_values(["task", "system", "run"], kind="stable").reset_index(drop=True)
    return out


def _where(frame: pd.DataFrame, row: int) -> str:
    r = frame.iloc[row]
    return f"task {r['task']!r}, item {r['item']!r}, system {r['system']!r}" + (
        f", run {r['run']}" if "run" in frame.columns else ""
    )
