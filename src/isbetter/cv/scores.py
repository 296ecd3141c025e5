"""Read per-fold or per-data-set scores into a validated :class:`ScoreTable`.

Scores come in long ("tidy") form, one row per score with columns for the data
set, the system, the cross-validation run and fold, and one or more metric
columns; as a per-data-set table, one score per data set and system (long without
run and fold columns, or wide: one column per system, one row per data set, as
autorank and scmamp take them); or as wide arrays as baycomp takes them (``x``
and ``y`` of shape ``(n_datasets, runs * folds)``). Either way they are validated
once, here, and models only ever receive validated :class:`PairedScores`.

The sign convention lives here too: differences are oriented so that a positive
difference means system A is better, whatever the direction of the metric.
"""

from __future__ import annotations

import itertools
import numbers
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import input_record
from isbetter.core.table_rows import keep_systems
from isbetter.core.tables import first_line, read_table, where
from isbetter.core.validate import check_columns, check_positive_int, counted, plural

__all__ = [
    "PairedScores",
    "ScoreTable",
    "as_scores",
    "check_paired",
    "from_arrays",
    "read_scores",
    "read_table",
]

_KEY = ("dataset", "system", "run", "fold")


@dataclass(frozen=True)
class PairedScores:
    """Per-data-set score differences of two systems, oriented "positive = A better".

    Attributes
    ----------
    system_a, system_b : str
        The two systems.
    metric : str
        The metric the differences are taken on.
    higher_is_better : bool
        Direction of the metric; for lower-is-better metrics ``d = B - A``.
    datasets : tuple of str
        Data set names, in the order of :attr:`differences`.
    differences : tuple of numpy.ndarray
        One 1-D array per data set, ordered by (run, fold).
    n_runs, n_folds : numpy.ndarray
        Runs and folds per data set (integers).
    means_a, means_b : numpy.ndarray
        Mean raw score of each system on each data set.
    source : dict or None
        What the scores were read from (:attr:`ScoreTable.source`).
    dataset_names : tuple of str
        Display names of the data sets, in the order of :attr:`datasets` (empty
        when the table has none: the data sets are named by their keys).
    """

    system_a: str
    system_b: str
    metric: str
    higher_is_better: bool
    datasets: tuple[str, ...]
    differences: tuple[np.ndarray, ...] = field(repr=False)
    n_runs: np.ndarray = field(repr=False)
    n_folds: np.ndarray = field(repr=False)
    means_a: np.ndarray = field(repr=False)
    means_b: np.ndarray = field(repr=False)
    source: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    dataset_names: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def n_datasets(self) -> int:
        """Number of data sets."""
        return len(self.datasets)

    @property
    def per_dataset(self) -> bool:
        """True when there is one score per data set and system (no folds to model)."""
        return all(d.size == 1 for d in self.differences)

    def mean_differences(self) -> np.ndarray:
        """Mean difference on each data set (positive: A better)."""
        return np.array([d.mean() for d in self.differences])

    def swapped(self) -> PairedScores:
        """Return the same comparison with A and B exchanged."""
        return PairedScores(
            system_a=self.system_b,
            system_b=self.system_a,
            metric=self.metric,
            higher_is_better=self.higher_is_better,
            datasets=self.datasets,
            differences=tuple(-d for d in self.differences),
            n_runs=self.n_runs,
            n_folds=self.n_folds,
            means_a=self.means_b,
            means_b=self.means_a,
            source=self.source,
            dataset_names=self.dataset_names,
        )


@dataclass(frozen=True)
class ScoreTable:
    """Validated per-fold scores of several systems on one or more data sets.

    Build it with :func:`read_scores` or :func:`from_arrays`.

    Attributes
    ----------
    data : pandas.DataFrame
        Columns ``dataset, system, run, fold`` and one column per metric,
        sorted by data set, system, run and fold.
    metrics : tuple of str
        Metric columns.
    higher_is_better : dict
        Direction of each metric.
    dropped : pandas.DataFrame
        Rows removed because the user asked for ``drop_incomplete=True`` (empty
        otherwise), with a ``reason`` column and the key columns of `keys`.
    keys : tuple of str
        The key columns the input had, of ``dataset, system, run, fold`` (the
        others hold one value in :attr:`data`): messages name only these.
    source : dict or None
        What the table was read from: file name (or ``"DataFrame"``, ``"arrays"``),
        rows and SHA-256 checksum (:func:`isbetter.core.provenance.input_record`); every
        result computed from the table records it in ``settings["input"]``.
    dataset_names : dict
        Display name of each data set key (``read_scores(dataset_name=...)``), for
        reports and plots; empty when the keys are the names.
    """

    data: pd.DataFrame = field(repr=False)
    metrics: tuple[str, ...]
    higher_is_better: dict[str, bool]
    dropped: pd.DataFrame = field(repr=False)
    keys: tuple[str, ...] = _KEY
    source: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    dataset_names: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def systems(self) -> tuple[str, ...]:
        """System names, sorted."""
        return tuple(sorted(self.data["system"].unique()))

    @property
    def datasets(self) -> tuple[str, ...]:
        """Data set names, in order of their keys (numbers in them as numbers: "2" before "10")."""
        return tuple(pd.unique(self.data["dataset"]))

    @property
    def per_dataset(self) -> bool:
        """True when there is one score per data set and system (no folds to model).

        Such scores suit the sign and signed-rank tests; the correlated t-test and
        the hierarchical model need the scores of every fold.
        """
        return len(self.data) == len(self.systems) * len(self.datasets)

    def paired(self, system_a: str, system_b: str, *, metric: str | None = None) -> PairedScores:
        """Return the per-data-set differences of `system_a` and `system_b`.

        Parameters
        ----------
        system_a, system_b : str
            The systems to compare; the difference is positive when A is better.
        metric : str, optional
            Metric column; default: the only (or first) metric.
        """
        metric = self._metric(metric)
        systems = self.systems
        for arg, name in (("system_a", system_a), ("system_b", system_b)):
            if name not in systems:
                raise InputError(
                    f"`{arg}`: unknown system {name!r}. Available systems: "
                    + ", ".join(repr(s) for s in systems)
                    + "."
                )
        if system_a == system_b:
            raise InputError(
                f"`system_a` and `system_b` are both {system_a!r}; compare two different systems."
            )
        # the table is sorted by data set (in order of appearance), system, run and fold,
        # and every key is there for every system: both systems' rows line up, one block
        # per data set, so pairing is a vectorised split (linear in the number of scores)
        sa = self.data[self.data["system"].to_numpy() == system_a]
        sb = self.data[self.data["system"].to_numpy() == system_b]
        keys = ["dataset", "run", "fold"]
        if len(sa) != len(sb) or not all(
            np.array_equal(sa[k].to_numpy(), sb[k].to_numpy()) for k in keys
        ):
            raise InputError(
                f"Systems {system_a!r} and {system_b!r} do not have the same (data set, run, "
                "fold) keys; read the table again without dropping rows by hand."
            )
        sign = 1.0 if self.higher_is_better[metric] else -1.0
        a = sa[metric].to_numpy(dtype=float)
        b = sb[metric].to_numpy(dtype=float)
        codes, names = pd.factorize(sa["dataset"].to_numpy())
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        counts = np.diff(np.r_[starts, codes.size])
        grouped = sa.groupby(codes, sort=True)
        runs = grouped["run"].nunique().to_numpy()
        folds = grouped["fold"].nunique().to_numpy()
        diffs = np.split(sign * (a - b), starts[1:])
        datasets = [str(names[c]) for c in codes[starts]]
        mean_a = np.add.reduceat(a, starts) / counts
        mean_b = np.add.reduceat(b, starts) / counts
        return PairedScores(
            system_a=system_a,
            system_b=system_b,
            metric=metric,
            higher_is_better=self.higher_is_better[metric],
            datasets=tuple(datasets),
            differences=tuple(diffs),
            n_runs=runs.astype(int),
            n_folds=folds.astype(int),
            means_a=mean_a,
            means_b=mean_b,
            source=self.source,
            dataset_names=(
                tuple(self.dataset_names.get(d, d) for d in datasets) if self.dataset_names else ()
            ),
        )

    def _metric(self, metric: str | None) -> str:
        if metric is None:
            return self.metrics[0]
        if metric not in self.metrics:
            raise InputError(
                f"`metric`: unknown metric {metric!r}. Available metrics: "
                + ", ".join(repr(m) for m in self.metrics)
                + "."
            )
        return metric


def check_paired(scores: Any, method: str) -> PairedScores:
    """Return `scores` if they are :class:`PairedScores`, else raise saying how to get them.

    `method` names the method of :func:`~isbetter.compare` the calling test is, for the advice.
    """
    if isinstance(scores, PairedScores):
        return scores
    if isinstance(scores, ScoreTable):
        advice = (
            "pair two of its systems with `table.paired(system_a, system_b)` (systems: "
            + ", ".join(repr(s) for s in scores.systems[:5])
            + (" ..." if len(scores.systems) > 5 else "")
            + f"), or call `isbetter.compare(table, system_a, system_b, method='{method}')`"
        )
    else:
        advice = (
            "build them with `read_scores(...).paired('A', 'B')`, or from arrays with "
            "`from_arrays(x, y, runs=...).paired('A', 'B')`"
        )
    raise InputTypeError(
        f"`scores` must be PairedScores (the differences of two systems), got "
        f"{type(scores).__name__}; {advice}."
    )


def read_scores(
    source: Any,
    *,
    dataset: str | Sequence[str] | None = "dataset",
    system: str = "system",
    run: str | None = "run",
    fold: str | None = "fold",
    score: str | Sequence[str] = "score",
    higher_is_better: bool | Mapping[str, bool] = True,
    drop_incomplete: bool = False,
    systems: Sequence[str] | None = None,
    wide: bool = False,
    dataset_name: str | None = None,
) -> ScoreTable:
    """Read scores in long or wide form and validate them.

    Three shapes of table are read:

    * **per fold** (long): one row per score, with columns for the data set, the
      system, the cross-validation run and fold, and one or more metric columns;
    * **per data set** (long): one score per data set and system, no run or fold
      columns — read so when ``fold=None``, or when the table has neither a ``run``
      nor a ``fold`` column (the default names);
    * **per data set** (wide, ``wide=True``): one row per data set and one column
      per system, as autorank and scmamp take them.

    Per-data-set scores suit the Bayesian sign and signed-rank tests (``method="auto"``
    of :func:`~isbetter.compare` and :func:`~isbetter.rank` picks the signed-rank
    test for them). The correlated t-test and the hierarchical model need the score
    of every fold: they weigh each data set's mean difference by the spread and
    correlation of its folds, which one score per data set does not show.

    Parameters
    ----------
    source : pandas.DataFrame or path
        The table, or a CSV / TSV, Parquet or JSON-lines file (see :func:`read_table`).
    dataset : str, sequence of str or None, default: "dataset"
        Data set column; several columns make one key (their values joined by
        ``/``, e.g. function and dimension ``"3/10"``). ``None``: a long table holds
        one data set; the rows of a wide table are its data sets, named by the
        DataFrame's index labels (a file's rows: 1, 2, ...).
    system, run, fold : str or None
        Key columns of a long table. ``run=None``: a single run of
        cross-validation; ``fold=None`` (with ``run=None``): one score per data set
        and system. Not used by a wide table.
    score : str or sequence of str, default: "score"
        Metric column(s); of a wide table, the name of its one metric.
    higher_is_better : bool or mapping, default: True
        Direction of the metric(s); a mapping gives it per metric
        (e.g. ``{"accuracy": True, "error": False}``).
    drop_incomplete : bool, default: False
        Drop rows with missing or infinite scores and (data set, run, fold)
        keys not present for every system, instead of raising; what was dropped
        is kept in :attr:`ScoreTable.dropped`.
    systems : sequence of str, optional
        Keep only these systems (default: all; of a wide table: every column but
        the data set column): a system left out can neither block nor change the
        comparison of the others through its own missing folds.
    wide : bool, default: False
        The table is wide: one row per data set, one column per system.
    dataset_name : str, optional
        A column naming each data set for reports and plots when the data set
        column is an id (``dataset="dataset_id", dataset_name="dataset_name"``:
        "data set anneal (1)"); the ids stay the keys, so names may repeat.

    Returns
    -------
    ScoreTable

    Raises
    ------
    InputError
        Unknown columns, an empty table, missing or infinite scores, duplicated
        (system, data set, run, fold) keys, systems with different folds on a
        data set.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dataset": "d1", "system": ["a"] * 3 + ["b"] * 3,
    ...                    "fold": [1, 2, 3] * 2, "score": [.8, .7, .9, .6, .7, .8]})
    >>> table = read_scores(df, run=None)
    >>> table.paired("a", "b").differences[0].round(2)
    array([0.2, 0. , 0.1])

    One AUC per data set and classifier, wide:

    >>> auc = pd.DataFrame({"dataset": ["adult", "cmc", "iris"], "c45": [.76, .63, .95],
    ...                     "c45m": [.77, .66, .95]})
    >>> table = read_scores(auc, wide=True, score="auc")
    >>> table.per_dataset, table.paired("c45m", "c45").differences
    (True, (array([0.01]), array([0.03]), array([0.])))
    """
    df = read_table(source)
    metrics = _metric_names(score)
    if not metrics:
        raise InputError("`score` must name at least one metric column, got none.")
    datasets = [dataset] if isinstance(dataset, str) else list(dataset or [])
    if dataset_name is not None:
        check_columns([dataset_name], [str(c) for c in df.columns])
    if wide:
        out, keys = _from_wide(df, source, datasets, metrics, system, run, fold, dataset_name)
    else:
        out, keys = _from_long(df, datasets, system, run, fold, metrics, first_line(source))
    if len(out) == 0:
        raise InputError("The score table is empty; it needs at least one row per score.")
    out.index.names = [None] * out.index.nlevels  # an index named "dataset" is no column
    directions = _directions(higher_is_better, metrics)
    out = keep_systems(out, systems)
    lines = first_line(source)
    for m in metrics:
        out[m] = _numbers(out, m, lines, wide)
    table = _validate(out, metrics, directions, drop_incomplete, lines, keys, wide)
    names = _display_names(df, datasets, dataset_name) if dataset_name is not None else {}
    return replace(table, source=input_record(df, source), dataset_names=names)


def _dataset_names(df: pd.DataFrame, datasets: list[str]) -> Any:
    """Return the data set of each row: one column, or several joined by "/"."""
    if len(datasets) == 1:
        return df[datasets[0]].astype(str)
    return df[datasets].astype(str).agg("/".join, axis=1)


def _from_long(
    df: pd.DataFrame,
    datasets: list[str],
    system: str,
    run: str | None,
    fold: str | None,
    metrics: tuple[str, ...],
    lines: tuple[int, str] | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Return a long table in the internal column names, and the key columns it has."""
    columns = [str(c) for c in df.columns]
    run, fold = _grid_columns(columns, run, fold)
    needed = [*datasets, system, *(c for c in (run, fold) if c is not None), *metrics]
    hints = {
        "run": "for a single run of cross-validation, pass `run=None`",
        "fold": "for one score per data set and system, pass `fold=None`"
        + (" and `run=None`" if run is not None else ""),
        "system": "for a wide table (one column per system), pass `wide=True`",
    }
    named = {"system": system, "run": run, "fold": fold}
    check_columns(needed, columns, hints={c: hints[k] for k, c in named.items() if c is not None})
    keyed = [("system", system), *(("data set", d) for d in datasets), ("run", run), ("fold", fold)]
    for what, name in keyed:
        missing = df[name].isna().to_numpy(dtype=bool) if name is not None else None
        if missing is not None and missing.any():
            raise InputError(
                f"Column {name!r} ({what}) has missing values ({where(df.index[missing], lines)});"
                f" every score needs a {what}: fill {plural(int(missing.sum()), 'it', 'them')} in."
            )
    out = pd.DataFrame(
        {
            "dataset": _dataset_names(df, datasets) if datasets else "data",
            "system": df[system].astype(str),
            "run": df[run] if run is not None else 1,
            "fold": df[fold] if fold is not None else 1,
        }
    )
    for m in metrics:
        out[m] = df[m]
    present = {"dataset": bool(datasets), "system": True, "run": run is not None}
    return out, tuple(k for k in _KEY if present.get(k, fold is not None))


def _metric_names(score: Any) -> tuple[str, ...]:
    """Return the metric column names `score` gives: one name or a sequence of names."""
    names = (score,) if isinstance(score, str) else score
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise InputTypeError(
            "`score` must name the metric column (a str, e.g. score='accuracy') or several "
            f"(a list of str), got {type(score).__name__} {score!r}."
        )
    return tuple(names)


def _grid_columns(
    columns: Sequence[str], run: str | None, fold: str | None
) -> tuple[str | None, str | None]:
    """Return the run and fold columns; (None, None) for one score per data set and system.

    A table is read per data set when `fold` is None, or when it has neither the
    default ``run`` nor the default ``fold`` column.
    """
    run_absent = run is None or (run == "run" and run not in columns)
    if fold is None:
        if not run_absent:
            raise InputError(
                f"`fold=None` reads one score per data set and system, which has no runs, but "
                f"`run` names the column {run!r}: pass `run=None` as well. For scores of "
                "repeated train/test splits, name the split column with `fold` instead (and "
                "give the comparison `rho`, the share of the data each test set holds)."
            )
        return None, None
    if fold == "fold" and fold not in columns and run_absent:
        return None, None
    return run, fold


def _from_wide(
    df: pd.DataFrame,
    source: Any,
    datasets: list[str],
    metrics: tuple[str, ...],
    system: str,
    run: str | None,
    fold: str | None,
    dataset_name: str | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Return a wide table (a row per data set, a column per system) in long form, and its keys."""
    if len(metrics) != 1:
        raise InputError(
            f"`score` names the one metric of a wide table, got {len(metrics)}: "
            + ", ".join(map(repr, metrics))
            + "; read each metric's table on its own."
        )
    unused = [
        f"`{name}`"
        for name, value in (("system", system), ("run", run), ("fold", fold))
        if value not in (name, None)  # the default names, or "no such column"
    ]
    if unused:
        n = len(unused)
        raise InputError(
            f"{', '.join(unused)} {plural(n, 'names a column', 'name columns')} of a long table; "
            "a wide table has one column per system and no run or fold columns: leave "
            f"{plural(n, 'it', 'them')} out."
        )
    columns = [str(c) for c in df.columns]
    unnamed = "when the rows are not named, pass `dataset=None`"
    check_columns(datasets, columns, hints=dict.fromkeys(datasets, unnamed))
    names = _dataset_names(df, datasets) if datasets else _row_names(df, source)
    parts = [
        pd.DataFrame(
            {"dataset": names, "system": str(c), "run": 1, "fold": 1, metrics[0]: df[c]},
            index=df.index,
        )
        for c in df.columns
        if str(c) not in datasets and str(c) != dataset_name
    ]
    if not parts:
        raise InputError(
            "The wide table has no system columns; it needs one column per system besides "
            "the data set column."
        )
    return pd.concat(parts), ("dataset", "system")


def _row_names(df: pd.DataFrame, source: Any) -> Any:
    """Return names of unnamed data sets: a DataFrame's index labels, or a file's rows from 1."""
    if isinstance(source, pd.DataFrame):
        return df.index.astype(str)
    return [str(i + 1) for i in range(len(df))]


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: a number written with a decimal comma: "0,944444444444", "-1,5", "94,4"
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d*,\d+\s*$")


def _numbers(
    frame: pd.DataFrame, metric: str, lines: tuple[int, str] | None, wide: bool
) -> np.ndarray:
    """Return a metric column as floats, or raise naming the rows that are not numbers."""
    values = frame[metric]
    if pd.api.types.is_bool_dtype(values):
        raise InputTypeError(f"Metric column {metric!r} must hold numbers, found True / False.")
    if pd.api.types.is_complex_dtype(values) or values.map(np.iscomplexobj).any():
        raise InputTypeError(
            f"Metric column {metric!r} holds complex numbers; scores must be real numbers "
            "(take the real part, or the magnitude, yourself if that is what is meant)."
        )
    if pd.api.types.is_numeric_dtype(values):
        return values.astype(float).to_numpy()
    text = values.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    missing = values.isna().to_numpy(dtype=bool)
    other = ~(text | missing | values.map(_is_number).to_numpy(dtype=bool))
    parsed = pd.to_numeric(values.where(text), errors="coerce")
    bad = other | (text & parsed.isna().to_numpy(dtype=bool))
    if not bad.any() and lines is not None:
        # a file's column is text when a row left out (another system's) is not a number
        return parsed.where(text, values).astype(float).to_numpy()
    if not bad.any():
        bad = text  # a DataFrame's numbers written as text ("0.8"): say so rather than guess
    if not bad.any():
        return values.astype(float).to_numpy()
    rows = frame[bad]
    shown = [
        (f", column {s!r}" if wide else "") + f": {v!r}"
        for v, s in zip(rows[metric], rows["system"], strict=True)
    ]
    n = int(bad.sum())
    comma = rows[metric].map(lambda v: isinstance(v, str) and _DECIMAL_COMMA.match(v) is not None)
    if comma.any():
        example = rows[metric][comma].iloc[0].strip()
        details = [f": {v!r}" for v in rows[metric][comma]]
        raise InputTypeError(
            f"Metric column {metric!r} is written with a decimal comma ("
            f"{where(rows.index[comma.to_numpy()], lines, details=details)}"
            f"); write decimal points ({example.replace(',', '.')!r}) in the file (pandas reads "
            "decimal commas with read_csv(..., decimal=','): give read_scores that DataFrame)."
        )
    what = "The scores" if wide else f"Metric column {metric!r}"
    fix = (
        "choose the system columns with `systems`"
        if wide
        else "name the metric column with `score`"
    )
    raise InputTypeError(
        f"{what} must hold numbers ({where(rows.index, lines, details=shown)}); fix "
        f"{'that value' if n == 1 else 'those values'}, or {fix}."
    )


def _display_names(df: pd.DataFrame, datasets: list[str], column: str) -> dict[str, str]:
    """Each data set key's display name from `column`; one name per data set."""
    keys = _dataset_names(df, datasets) if datasets else pd.Series("data", index=df.index)
    pairs = pd.DataFrame({"key": keys, "name": df[column].astype(str)}).drop_duplicates()
    twice = pairs[pairs["key"].duplicated(keep=False)]
    if len(twice):
        key = twice["key"].iloc[0]
        shown = ", ".join(repr(n) for n in twice.loc[twice["key"] == key, "name"])
        raise InputError(
            f"`dataset_name`: column {column!r} gives data set {key!r} several names ({shown}); "
            "give each data set one name."
        )
    return dict(zip(pairs["key"], pairs["name"], strict=True))


def _directions(higher_is_better: bool | Mapping[str, bool], metrics: tuple[str, ...]) -> dict:
    if isinstance(higher_is_better, bool | np.bool_):
        return {m: bool(higher_is_better) for m in metrics}
    if isinstance(higher_is_better, Mapping):
        missing = [m for m in metrics if m not in higher_is_better]
        if missing:
            raise InputError(
                "`higher_is_better` has no direction for metric(s) "
                + ", ".join(repr(m) for m in missing)
                + "; give True or False for every metric."
            )
        return {m: bool(higher_is_better[m]) for m in metrics}
    raise InputTypeError(
        "`higher_is_better` must be a bool or a mapping metric -> bool, got "
        f"{type(higher_is_better).__name__}."
    )


def _check_coverage(systems: np.ndarray, finite: np.ndarray, metrics: tuple[str, ...]) -> None:
    """Raise when a system has no finite score at all on a metric, naming both."""
    for j, m in enumerate(metrics):
        per_system = pd.Series(finite[:, j]).groupby(systems).any()
        if not per_system.all():
            name = per_system.index[~per_system.to_numpy()][0]
            raise InputError(
                f"System {name!r} has no scores on metric {m!r} (every value is missing or "
                "infinite); leave the metric out or give its scores."
            )


def _validate(
    df: pd.DataFrame,
    metrics: tuple[str, ...],
    directions: dict,
    drop_incomplete: bool,
    lines: tuple[int, str] | None = None,
    keys: tuple[str, ...] = _KEY,
    wide: bool = False,
) -> ScoreTable:
    dropped: list[pd.DataFrame] = []
    df = _drop_not_finite(df, metrics, drop_incomplete, dropped, lines, wide)
    _check_unique_keys(df, keys)
    systems = sorted(df["system"].unique())
    if len(systems) < 2:
        raise InputError(
            f"The score table has {counted(len(systems), 'system')} "
            f"({', '.join(map(repr, systems))}); a comparison needs at least two."
        )
    df = _drop_incomplete_keys(df, systems, keys, drop_incomplete, dropped)
    if not drop_incomplete:
        _check_grid(df[df["system"] == systems[0]])
    _check_magnitudes(df, metrics, lines, wide)
    # one canonical order, whatever the order of the rows read: data sets by their keys
    # (numbers as numbers: "2" before "10"), then system, run and fold, so that the
    # models see the same data in the same order (a shuffled file gave another fit)
    order = {name: i for i, name in enumerate(sorted(pd.unique(df["dataset"]), key=_natural))}
    df = df.sort_values(
        ["dataset", "system", "run", "fold"],
        key=lambda s: s.map(order) if s.name == "dataset" else s,
    ).reset_index(drop=True)
    dropped_df = (
        pd.concat(dropped, ignore_index=True)
        if dropped
        else pd.DataFrame(columns=[*df.columns, "reason"])
    ).drop(columns=[k for k in _KEY if k not in keys])
    return ScoreTable(
        data=df, metrics=metrics, higher_is_better=directions, dropped=dropped_df, keys=keys
    )


def _natural(key: str) -> tuple[tuple[Any, ...], str]:
    """Sort key of a data set: its digits as numbers ("2" < "10", "3/5" < "3/10"), then the text.

    The pieces alternate text and number (``re.split`` with a group), so two keys
    always compare piece by piece in the same types.
    """
    pieces = re.split(r"(\d+)", key)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(pieces)), key


#: scores more than this many typical deviations from the median are refused: the models
#: divide the differences by their mean per-data-set spread, and beside a score that far
#: the other data sets' variances (their spread squared, relative to that scale) fall
#: below float64's resolution (eps = 2.2e-16, so 1 / sqrt(eps) = 6.7e7 deviations)
MAGNITUDE_LIMIT = 1.0 / float(np.sqrt(np.finfo(float).eps))
#: the largest |score|: the models sum the squares of up to 1e8 differences (each at most
#: twice the largest score), which float64 holds below its maximum, 1.8e308
LARGEST_SCORE = 0.5 * float(np.sqrt(np.finfo(float).max / 1e8))
#: deviations from the median of at most this many units in its last place are taken as
#: rounding (0.5 beside 0.5000000000000001), not as the scores' spread
ROUNDING_ULPS = 4


def _check_magnitudes(
    df: pd.DataFrame,
    metrics: tuple[str, ...],
    lines: tuple[int, str] | None,
    wide: bool,
    locate: Callable[[pd.DataFrame], str] | None = None,
) -> None:
    """Raise when a score is too large for the models' numerics, naming its row.

    A score beyond :data:`LARGEST_SCORE` overflows the models' sums of squares; one more
    than :data:`MAGNITUDE_LIMIT` typical deviations (the upper quartile of the absolute
    deviations from the median, or the smallest one that is not zero where more than three
    quarters of the scores are equal) from the median leaves every other data set's spread
    below float64's resolution once the model scales the differences (accuracies with one
    value 1e15 crashed or hung the samplers). The upper quartile, not the median absolute
    deviation: where half the scores tie, the median deviation is zero or a rounding error
    (ten scores 0.5, one 0.5000000000000001 and nine 0.75 gave 5.55e-17 and refused the
    0.75s), while a quarter of the scores would have to be far off to move the quartile.
    Deviations within :data:`ROUNDING_ULPS` units in the last place of the median count as
    none (ten 0.5000000000000001, nine 0.5 and one 0.75 gave an upper quartile of 1.1e-16).
    `locate` names the rows (default: their file lines or index labels).
    """
    for m in metrics:
        x = df[m].to_numpy(dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            centre = np.median(x)
            deviation = np.abs(x - centre)
            # within a few units in the last place of the median: rounding, not spread
            deviation[deviation <= ROUNDING_ULPS * np.spacing(np.abs(centre))] = 0.0
            spread = deviation[deviation > 0]
            typical = float(np.quantile(deviation, 0.75)) or (
                float(spread.min()) if spread.size else 0.0
            )
            far = np.abs(x) > LARGEST_SCORE
            if typical > 0:
                far |= deviation > MAGNITUDE_LIMIT * typical
        if not far.any():
            continue
        n = int(far.sum())
        rows = df[far]
        shown = [
            (f", column {s!r}" if wide else "") + f": {v:.6g}"
            for v, s in zip(rows[m], rows["system"], strict=True)
        ]
        located = where(rows.index, lines, details=shown) if locate is None else locate(rows)
        raise InputError(
            f"{counted(n, 'score')} of {m!r} {plural(n, 'is', 'are')} too far from the others "
            f"for the models' float64 numerics ({located}): "
            f"the median is {np.median(x):.6g} and the typical deviation from it "
            f"{typical:.3g}; a score may lie at most {MAGNITUDE_LIMIT:.2g} typical deviations "
            f"from the median (and within ±{LARGEST_SCORE:.2g}). Fix "
            f"{plural(n, 'that value', 'those values')} (a typing error?), or put the data "
            "sets on one scale."
        )


def _drop_not_finite(
    df: pd.DataFrame,
    metrics: tuple[str, ...],
    drop_incomplete: bool,
    dropped: list[pd.DataFrame],
    lines: tuple[int, str] | None,
    wide: bool,
) -> pd.DataFrame:
    """Return `df` without its missing or infinite scores (kept in `dropped`), or raise."""
    finite = np.isfinite(df[list(metrics)].to_numpy())
    _check_coverage(df["system"].to_numpy(), finite, metrics)
    bad = ~finite.all(axis=1)
    if not bad.any():
        return df
    if not drop_incomplete:
        n = int(bad.sum())
        columns = [f", column {s!r}" for s in df["system"][bad]] if wide else None
        raise InputError(
            f"{counted(n, 'score')} {plural(n, 'is', 'are')} missing (NaN) or infinite "
            f"({where(df.index[bad], lines, details=columns)}); scores must be finite. "
            f"Fix {plural(n, 'it', 'them')}, or pass `drop_incomplete=True` to drop "
            f"{plural(n, 'that row', 'those rows')}."
        )
    dropped.append(df[bad].assign(reason="missing or infinite score"))
    return df[~bad]


def _check_unique_keys(df: pd.DataFrame, keys: tuple[str, ...]) -> None:
    """Raise when two scores share a key, naming only the input's key columns."""
    named = [k for k in ("system", "dataset", "run", "fold") if k in keys]  # the input's keys
    dup = df.duplicated(list(_KEY), keep=False)
    if not dup.any():
        return
    first = df[dup].iloc[0]
    per_dataset = "run" not in keys and "fold" not in keys
    raise InputError(
        f"Duplicated ({', '.join(named)}) keys: {int(dup.sum())} rows, e.g. "
        f"{tuple(first[named].tolist())!r}; every score needs a unique key "
        + (
            "(a table without run and fold columns holds one score per data set and "
            "system; for per-fold scores, name the fold column with `fold` and the run "
            "column with `run`)."
            if per_dataset
            else "(is a run or data set column missing?)."
        )
    )


def _drop_incomplete_keys(
    df: pd.DataFrame,
    systems: list[str],
    keys: tuple[str, ...],
    drop_incomplete: bool,
    dropped: list[pd.DataFrame],
) -> pd.DataFrame:
    """Return `df` without the keys some system lacks (kept in `dropped`), or raise."""
    keys_per = df.groupby(["dataset", "run", "fold"], sort=False)["system"].transform("size")
    incomplete = keys_per < len(systems)
    if incomplete.any():
        if not drop_incomplete:
            raise InputError(_incomplete(df, incomplete, systems, keys))
        dropped.append(df[incomplete].assign(reason="key not present for every system"))
        df = df[~incomplete]
    if len(df) == 0:
        raise InputError("No complete scores are left after dropping incomplete rows.")
    return df


def _check_grid(grid: pd.DataFrame) -> None:
    """Raise unless one system's scores form a full runs x folds grid on each data set.

    After dropping incomplete folds the grid may be ragged on purpose (rho then
    still uses the number of distinct folds): callers check only undropped tables.
    """
    shape = grid.groupby("dataset", sort=False).agg(
        runs=("run", "nunique"), folds=("fold", "nunique"), size=("fold", "size")
    )
    ragged = shape[shape["runs"] * shape["folds"] != shape["size"]]
    if len(ragged):
        ds, row = ragged.index[0], ragged.iloc[0]
        raise InputError(
            f"Data set {ds!r} has {int(row['size'])} scores per system, not runs x folds = "
            f"{int(row['runs'])} x {int(row['folds'])}; every run needs the same folds."
        )


def _incomplete(
    df: pd.DataFrame, incomplete: pd.Series, systems: list[str], keys: tuple[str, ...]
) -> str:
    """Say which system lacks a score where the others have one, naming only the input's keys."""
    ds, run, fold = df[incomplete].iloc[0][["dataset", "run", "fold"]]  # a key lacking
    counts = df[df["dataset"] == ds].groupby("system").size().reindex(systems, fill_value=0)
    listing = ", ".join(f"{s} ({n})" for s, n in counts.items())
    has = df.loc[(df["dataset"] == ds) & (df["run"] == run) & (df["fold"] == fold)]
    lacking = ", ".join(sorted(set(systems) - set(has["system"])))
    grid = " ".join(f"{k} {v}" for k, v in (("run", run), ("fold", fold)) if k in keys)
    if not grid:  # one score per data set and system
        return (
            f"Data set {ds!r} has no score of {lacking} ({listing}); every system needs a "
            "score on every data set (or pass `drop_incomplete=True`)."
        )
    return (
        f"Folds differ between systems on data set {ds!r}: {listing}; e.g. {grid} has no score "
        f"of {lacking}. Every (system, data set) pair needs the same fold labels (or pass "
        "`drop_incomplete=True`)."
    )


def _runs_of(n: int, runs: int | None, folds: int | None) -> int:
    """Return the number of runs of `n` scores per row, from `runs` and / or `folds`."""
    if runs is None and folds is None:
        if n == 1:
            return 1
        raise InputError(
            f"`from_arrays` cannot tell how the {n} scores per data set were made; pass "
            f"`runs` (e.g. runs=1 for one run of {n}-fold cross-validation"
            + (f", runs=10 for 10 runs of {n // 10}-fold" if n % 10 == 0 and n > 10 else "")
            + ") or `folds`: the correlation of the scores, rho = 1/folds, depends on it."
        )
    if folds is not None:
        folds = check_positive_int(folds, "folds")
        if n % folds:
            raise InputError(f"`folds`={folds} does not divide the {n} scores per data set.")
        if runs is not None and check_positive_int(runs, "runs") * folds != n:
            raise InputError(f"`runs` x `folds` = {runs} x {folds} is not the {n} scores per row.")
        return n // folds
    runs = check_positive_int(runs, "runs")
    if n % runs:
        raise InputError(f"`runs`={runs} does not divide the {n} scores per data set.")
    return runs


def _score_array(values: Any, name: str) -> np.ndarray:
    """Return the scores `values` of :func:`from_arrays` as a float array, or raise saying why."""
    try:
        raw = np.asarray(values)
    except ValueError as exc:  # rows of different lengths
        raise InputError(
            f"`{name}` has rows of different lengths; every data set (row) needs the same "
            "number of scores, runs x folds (read a long table with `read_scores` when they "
            "differ)."
        ) from exc
    if raw.dtype == object:
        raise InputError(
            f"`{name}` has rows of different lengths or values that are not numbers; give "
            "an array of numbers, one row of runs x folds scores per data set."
        )
    if np.iscomplexobj(raw):
        raise InputTypeError(
            f"`{name}` holds complex numbers; scores must be real numbers (take the real "
            "part, or the magnitude, yourself if that is what is meant)."
        )
    try:
        return raw.astype(float)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"`{name}` must hold numbers, got {raw.dtype} values.") from exc


def from_arrays(
    x: Any,
    y: Any,
    *,
    names: tuple[str, str] = ("A", "B"),
    runs: int | None = None,
    folds: int | None = None,
    datasets: Sequence[str] | None = None,
    higher_is_better: bool = True,
    metric: str = "score",
) -> ScoreTable:
    """Build a :class:`ScoreTable` from wide arrays, as baycomp takes them.

    Parameters
    ----------
    x, y : array_like
        Scores of system A (`x`) and B (`y`): shape ``(runs * folds,)`` for one
        data set, or ``(n_datasets, runs * folds)``. Within a row, scores are
        ordered run by run (all folds of run 1, then run 2, ...). Note that
        baycomp takes the difference ``y - x``; isbetter orients it as A (`x`)
        minus B (`y`), so that positive means A better.
    names : tuple of str, default: ("A", "B")
        Names of the two systems.
    runs, folds : int, optional
        How the scores of a row were made: `runs` repetitions of `folds`-fold
        cross-validation (give one or both). Required when a row has more than one
        score: the correlation of the scores, ``rho = 1 / folds``, depends on it
        (10 x 10-fold scores read as one run of 100 folds would get ``rho = 0.01``
        instead of 0.1).
    datasets : sequence of str, optional
        Names of the data sets (rows); default ``"0", "1", ...``.
    higher_is_better : bool, default: True
        Direction of the metric.
    metric : str, default: "score"
        Name of the metric.

    Returns
    -------
    ScoreTable
    """
    xa, ya = _score_array(x, "x"), _score_array(y, "y")
    if xa.shape != ya.shape:
        raise InputError(f"`x` and `y` must have the same shape, got {xa.shape} and {ya.shape}.")
    if xa.ndim == 1:
        xa, ya = xa[None, :], ya[None, :]
    if xa.ndim != 2 or xa.size == 0:
        raise InputError(
            f"`x` and `y` must be non-empty arrays of shape (runs * folds,) or "
            f"(n_datasets, runs * folds), got shape {np.shape(x)}."
        )
    q, n = xa.shape
    runs = _runs_of(n, runs, folds)
    if len(names) != 2 or names[0] == names[1]:
        raise InputError(f"`names` must be two different system names, got {names!r}.")
    if datasets is None:
        datasets = [str(i) for i in range(q)]
    if len(datasets) != q:
        raise InputError(f"`datasets` has {len(datasets)} names for {q} rows of scores.")
    folds = n // runs
    # one long table, built by repetition: system-major, then data set, run, fold
    frame = pd.DataFrame(
        {
            "dataset": np.tile(np.repeat(np.asarray(datasets, dtype=str), n), 2),
            "system": np.repeat(np.asarray(names, dtype=str), q * n),
            "run": np.tile(np.repeat(np.arange(1, runs + 1), folds), 2 * q),
            "fold": np.tile(np.arange(1, folds + 1), 2 * q * runs),
            metric: np.concatenate([xa.ravel(), ya.ravel()]),
        }
    )
    shape = xa.shape if np.ndim(x) == 2 else xa.shape[1:]

    def cells(rows: pd.DataFrame) -> str:  # the arrays' own positions, then what they are
        named = []
        for i, row in itertools.islice(rows.iterrows(), 5):
            array, cell = ("x", "y")[int(i) // xa.size], np.unravel_index(int(i) % xa.size, shape)
            named.append(
                f"`{array}`[{', '.join(map(str, cell))}] (data set {row['dataset']!r}, system "
                f"{row['system']!r}, run {row['run']}, fold {row['fold']}): {row[metric]:.6g}"
            )
        return ", ".join(named) + (" ..." if len(rows) > 5 else "")

    _check_magnitudes(frame, (metric,), None, False, locate=cells)
    table = read_scores(
        frame,
        score=metric,
        higher_is_better=higher_is_better,
    )
    return replace(table, source=input_record(frame, what="arrays"))


def as_scores(data: Any, metric: str | None = None) -> ScoreTable | PairedScores:
    """Return the scores given to :func:`~isbetter.compare` as a table, however given.

    A :class:`ScoreTable` or :class:`PairedScores` is used as it is; a DataFrame or a
    file is read by :func:`read_scores` with its default column names (``dataset,
    system, run, fold`` and `metric`, default ``score``). For other names, call
    :func:`read_scores` and pass its table.
    """
    if isinstance(data, ScoreTable | PairedScores):
        return data
    if isinstance(data, pd.DataFrame | str | os.PathLike):
        return read_scores(data, score=metric or "score")
    raise InputTypeError(
        "`scores` must be a ScoreTable (isbetter.read_scores), PairedScores, a DataFrame or "
        f"the path of a score table, got {type(data).__name__}."
    )
