"""Read per-fold scores into a validated :class:`ScoreTable`.

Scores come in long ("tidy") form, one row per score with columns for the data
set, the system, the cross-validation run and fold, and one or more metric
columns; or as wide arrays as baycomp takes them (``x`` and ``y`` of shape
``(n_datasets, runs * folds)``). Either way they are validated once, here, and
models only ever receive validated :class:`PairedScores`.

The sign convention lives here too: differences are oriented so that a positive
difference means system A is better, whatever the direction of the metric.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isbetter._errors import InputError, InputTypeError
from isbetter._validate import check_columns, check_positive_int

__all__ = ["PairedScores", "ScoreTable", "from_arrays", "read_scores", "read_table"]

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

    @property
    def n_datasets(self) -> int:
        """Number of data sets."""
        return len(self.datasets)

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
        otherwise), with a ``reason`` column.
    """

    data: pd.DataFrame = field(repr=False)
    metrics: tuple[str, ...]
    higher_is_better: dict[str, bool]
    dropped: pd.DataFrame = field(repr=False)

    @property
    def systems(self) -> tuple[str, ...]:
        """System names, sorted."""
        return tuple(sorted(self.data["system"].unique()))

    @property
    def datasets(self) -> tuple[str, ...]:
        """Data set names, in order of first appearance."""
        return tuple(pd.unique(self.data["dataset"]))

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
        sub = self.data[self.data["system"].isin([system_a, system_b])]
        wide = sub.pivot_table(
            index=["dataset", "run", "fold"], columns="system", values=metric, sort=False
        )
        sign = 1.0 if self.higher_is_better[metric] else -1.0
        datasets, diffs, runs, folds, mean_a, mean_b = [], [], [], [], [], []
        for ds in self.datasets:
            if ds not in wide.index.get_level_values(0):
                continue
            block = wide.loc[ds].sort_index()
            a = block[system_a].to_numpy(dtype=float)
            b = block[system_b].to_numpy(dtype=float)
            datasets.append(str(ds))
            diffs.append(sign * (a - b))
            idx = block.index
            runs.append(idx.get_level_values("run").nunique())
            folds.append(idx.get_level_values("fold").nunique())
            mean_a.append(a.mean())
            mean_b.append(b.mean())
        return PairedScores(
            system_a=system_a,
            system_b=system_b,
            metric=metric,
            higher_is_better=self.higher_is_better[metric],
            datasets=tuple(datasets),
            differences=tuple(diffs),
            n_runs=np.array(runs, dtype=int),
            n_folds=np.array(folds, dtype=int),
            means_a=np.array(mean_a),
            means_b=np.array(mean_b),
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


def read_table(source: Any, *, argument: str = "source") -> pd.DataFrame:
    """Read a DataFrame, or a CSV / TSV / Parquet file named by a path."""
    if isinstance(source, pd.DataFrame):
        return source
    if not isinstance(source, str | os.PathLike):
        raise InputTypeError(
            f"`{argument}` must be a pandas DataFrame or the path of a CSV or Parquet file, "
            f"got {type(source).__name__}."
        )
    path = Path(source)
    if not path.is_file():
        raise InputError(f"`{argument}`: no such file {str(path)!r}.")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path)
        if suffix == ".tsv":
            return pd.read_csv(path, sep="\t")
        return pd.read_csv(path)
    except ImportError as exc:
        raise InputError(
            f"`{argument}`: reading {suffix} files needs pyarrow; install it with "
            "`pip install isbetter[parquet]`."
        ) from exc
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(f"`{argument}`: cannot read {str(path)!r} as a table: {exc}") from exc


def read_scores(
    source: Any,
    *,
    dataset: str | None = "dataset",
    system: str = "system",
    run: str | None = "run",
    fold: str = "fold",
    score: str | Sequence[str] = "score",
    higher_is_better: bool | Mapping[str, bool] = True,
    drop_incomplete: bool = False,
) -> ScoreTable:
    """Read per-fold scores in long form and validate them.

    Parameters
    ----------
    source : pandas.DataFrame or path
        The table, or a CSV (``.csv``, ``.tsv``) or Parquet (``.parquet``) file.
    dataset, system, run, fold : str
        Names of the key columns. ``dataset=None`` means one data set;
        ``run=None`` means a single run of cross-validation.
    score : str or sequence of str, default: "score"
        Metric column(s).
    higher_is_better : bool or mapping, default: True
        Direction of the metric(s); a mapping gives it per metric
        (e.g. ``{"accuracy": True, "error": False}``).
    drop_incomplete : bool, default: False
        Drop rows with missing or infinite scores and (data set, run, fold)
        keys not present for every system, instead of raising; what was dropped
        is kept in :attr:`ScoreTable.dropped`.

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
    """
    df = read_table(source)
    metrics = (score,) if isinstance(score, str) else tuple(score)
    if not metrics:
        raise InputError("`score` must name at least one metric column, got none.")
    needed = [c for c in (dataset, system, run, fold) if c is not None] + list(metrics)
    check_columns(needed, [str(c) for c in df.columns])
    if len(df) == 0:
        raise InputError("The score table is empty; it needs at least one row per score.")
    directions = _directions(higher_is_better, metrics)

    out = pd.DataFrame(
        {
            "dataset": df[dataset].astype(str) if dataset is not None else "data",
            "system": df[system].astype(str),
            "run": df[run] if run is not None else 1,
            "fold": df[fold],
        }
    )
    for m in metrics:
        if not pd.api.types.is_numeric_dtype(df[m]) or pd.api.types.is_bool_dtype(df[m]):
            raise InputTypeError(
                f"Metric column {m!r} must hold numbers, found dtype {df[m].dtype}."
            )
        out[m] = df[m].astype(float).to_numpy()
    for col, name in (("run", run), ("fold", fold)):
        if out[col].isna().any():
            raise InputError(
                f"Column {name!r} ({col}) has missing values; every score needs a {col}."
            )
    return _validate(out, metrics, directions, drop_incomplete)


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


def _validate(
    df: pd.DataFrame, metrics: tuple[str, ...], directions: dict, drop_incomplete: bool
) -> ScoreTable:
    dropped: list[pd.DataFrame] = []

    bad = ~np.isfinite(df[list(metrics)].to_numpy()).all(axis=1)
    if bad.any():
        if not drop_incomplete:
            rows = ", ".join(str(i) for i in np.flatnonzero(bad)[:5])
            more = " ..." if bad.sum() > 5 else ""
            raise InputError(
                f"{int(bad.sum())} scores are missing (NaN) or infinite (rows {rows}{more}); "
                "scores must be finite. Fix them, or pass `drop_incomplete=True` to drop "
                "those rows."
            )
        dropped.append(df[bad].assign(reason="missing or infinite score"))
        df = df[~bad]

    dup = df.duplicated(list(_KEY), keep=False)
    if dup.any():
        first = df[dup].iloc[0]
        raise InputError(
            f"Duplicated (system, dataset, run, fold) keys: {int(dup.sum())} rows, e.g. "
            f"({first['system']!r}, {first['dataset']!r}, {first['run']!r}, {first['fold']!r}); "
            "every score needs a unique key (is a run or data set column missing?)."
        )

    systems = sorted(df["system"].unique())
    if len(systems) < 2:
        raise InputError(
            f"The score table has {len(systems)} system(s) ({', '.join(map(repr, systems))}); "
            "a comparison needs at least two."
        )

    n_systems = len(systems)
    keys_per = df.groupby(["dataset", "run", "fold"], sort=False)["system"].transform("size")
    incomplete = keys_per < n_systems
    if incomplete.any():
        if not drop_incomplete:
            ds = df.loc[incomplete, "dataset"].iloc[0]
            counts = df[df["dataset"] == ds].groupby("system").size().reindex(systems, fill_value=0)
            listing = ", ".join(f"{s} ({n})" for s, n in counts.items())
            raise InputError(
                f"Folds differ between systems on data set {ds!r}: {listing}; every "
                "(system, data set) pair needs the same folds (or pass `drop_incomplete=True`)."
            )
        dropped.append(df[incomplete].assign(reason="key not present for every system"))
        df = df[~incomplete]
    if len(df) == 0:
        raise InputError("No complete scores are left after dropping incomplete rows.")

    # a full runs x folds grid per data set; after dropping folds it may be ragged on purpose
    # (rho then still uses the number of distinct folds)
    grid = df[df["system"] == systems[0]] if not drop_incomplete else df.iloc[:0]
    for ds, block in grid.groupby("dataset", sort=False):
        n_runs = block["run"].nunique()
        n_folds = block["fold"].nunique()
        if n_runs * n_folds != len(block):
            raise InputError(
                f"Data set {ds!r} has {len(block)} scores per system, not runs x folds = "
                f"{n_runs} x {n_folds}; every run needs the same folds."
            )

    order = {name: i for i, name in enumerate(pd.unique(df["dataset"]))}
    df = df.sort_values(
        ["dataset", "system", "run", "fold"],
        key=lambda s: s.map(order) if s.name == "dataset" else s,
    ).reset_index(drop=True)
    dropped_df = (
        pd.concat(dropped, ignore_index=True)
        if dropped
        else pd.DataFrame(columns=[*df.columns, "reason"])
    )
    return ScoreTable(data=df, metrics=metrics, higher_is_better=directions, dropped=dropped_df)


def from_arrays(
    x: Any,
    y: Any,
    *,
    names: tuple[str, str] = ("A", "B"),
    runs: int = 1,
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
    runs : int, default: 1
        Number of cross-validation runs per row.
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
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.shape != ya.shape:
        raise InputError(f"`x` and `y` must have the same shape, got {xa.shape} and {ya.shape}.")
    if xa.ndim == 1:
        xa, ya = xa[None, :], ya[None, :]
    if xa.ndim != 2 or xa.size == 0:
        raise InputError(
            f"`x` and `y` must be non-empty arrays of shape (runs * folds,) or "
            f"(n_datasets, runs * folds), got shape {np.shape(x)}."
        )
    runs = check_positive_int(runs, "runs")
    q, n = xa.shape
    if n % runs:
        raise InputError(f"`runs`={runs} does not divide the {n} scores per data set.")
    if len(names) != 2 or names[0] == names[1]:
        raise InputError(f"`names` must be two different system names, got {names!r}.")
    if datasets is None:
        datasets = [str(i) for i in range(q)]
    if len(datasets) != q:
        raise InputError(f"`datasets` has {len(datasets)} names for {q} rows of scores.")
    folds = n // runs
    run_idx = np.repeat(np.arange(1, runs + 1), folds)
    fold_idx = np.tile(np.arange(1, folds + 1), runs)
    frames = [
        pd.DataFrame(
            {
                "dataset": str(ds),
                "system": name,
                "run": run_idx,
                "fold": fold_idx,
                metric: arr[i],
            }
        )
        for name, arr in zip(names, (xa, ya), strict=True)
        for i, ds in enumerate(datasets)
    ]
    return read_scores(
        pd.concat(frames, ignore_index=True),
        score=metric,
        higher_is_better=higher_is_better,
    )
