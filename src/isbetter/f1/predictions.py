"""Read per-document gold labels and predictions into a validated :class:`PredictionTable`.

The input of the paired F1 comparison (Zhang et al. 2016) is one row per test
document: its gold label and the label each system predicted. Labels may be
binary or multi-class, numbers or strings. The table is validated once, here:
empty input, unequal lengths, missing values, a single gold class and
predicted labels that never occur in the gold column are reported with one
clear message each, naming what to fix.

The paired models only need the joint outcome counts of two systems, for one
class against the rest: :meth:`PredictionTable.joint_counts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import input_record
from isbetter.core.tables import read_table
from isbetter.core.validate import check_columns

__all__ = ["JointCounts", "PredictionTable", "predictions_from_arrays", "read_predictions"]


@dataclass(frozen=True)
class JointCounts:
    """Counts of the joint outcomes of two binary classifiers on one test set.

    Attributes
    ----------
    pos, neg : numpy.ndarray
        Integer arrays of shape ``(..., 4)``: among the positive (``pos``) and the
        negative (``neg``) documents, how many got the predictions
        (A, B) = (1, 1), (1, 0), (0, 1), (0, 0). Leading dimensions index
        independent test sets (used by the power analysis).

    Examples
    --------
    >>> c = JointCounts.from_labels([1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0, 0])
    >>> c.pos.tolist(), c.neg.tolist()
    ([1, 0, 1, 0], [0, 1, 0, 1])
    >>> c.swapped().pos.tolist()
    [1, 1, 0, 0]
    """

    pos: np.ndarray
    neg: np.ndarray

    @classmethod
    def from_labels(cls, gold: Any, pred_a: Any, pred_b: Any) -> JointCounts:
        """Count joint outcomes from 0/1 (or boolean) gold labels and predictions."""
        y = np.asarray(gold).astype(bool)
        a = np.asarray(pred_a).astype(bool)
        b = np.asarray(pred_b).astype(bool)
        # outcome index: (1,1) -> 0, (1,0) -> 1, (0,1) -> 2, (0,0) -> 3
        idx = 2 * (~a) + (~b)
        pos = np.bincount(idx[y], minlength=4)
        neg = np.bincount(idx[~y], minlength=4)
        return cls(pos=pos.astype(np.int64), neg=neg.astype(np.int64))

    @property
    def n(self) -> np.ndarray | int:
        """Number of documents."""
        total = self.pos.sum(axis=-1) + self.neg.sum(axis=-1)
        return int(total) if np.ndim(total) == 0 else total

    def swapped(self) -> JointCounts:
        """Return the same counts with the roles of A and B exchanged."""
        order = [0, 2, 1, 3]
        return JointCounts(pos=self.pos[..., order], neg=self.neg[..., order])

    def cells(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """Observed contingency cells ``(tp, fp, fn, tn)`` of A and of B."""
        p, q = self.pos, self.neg
        cells_a = (
            p[..., 0] + p[..., 1],
            q[..., 0] + q[..., 1],
            p[..., 2] + p[..., 3],
            q[..., 2] + q[..., 3],
        )
        cells_b = (
            p[..., 0] + p[..., 2],
            q[..., 0] + q[..., 2],
            p[..., 1] + p[..., 3],
            q[..., 1] + q[..., 3],
        )
        return cells_a, cells_b

    def correctness(self) -> tuple[int, int, int, int]:
        """Return the counts of (both right, only A right, only B right, both wrong)."""
        p, q = self.pos, self.neg
        return (int(p[0] + q[3]), int(p[1] + q[2]), int(p[2] + q[1]), int(p[3] + q[0]))

    def to_dict(self) -> dict[str, list[int]]:
        """JSON-safe counts."""
        return {"pos": np.asarray(self.pos).tolist(), "neg": np.asarray(self.neg).tolist()}


@dataclass(frozen=True)
class PredictionTable:
    """Validated gold labels and the predictions of several systems on one test set.

    Build it with :func:`read_predictions` or :func:`predictions_from_arrays`.

    Attributes
    ----------
    gold : numpy.ndarray
        Gold label of each document.
    predictions : dict of str to numpy.ndarray
        Predicted labels of each system, aligned with :attr:`gold`.
    labels : tuple
        The classes, i.e. the distinct gold labels, sorted.
    ids : numpy.ndarray or None
        Document ids, if an id column was given.
    source : dict or None
        What the table was read from: file name (or ``"DataFrame"``, ``"arrays"``),
        rows and SHA-256 checksum; results record it in ``settings["input"]``.
    """

    gold: np.ndarray = field(repr=False)
    predictions: dict[str, np.ndarray] = field(repr=False)
    labels: tuple[Any, ...]
    ids: np.ndarray | None = field(default=None, repr=False)
    source: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def systems(self) -> tuple[str, ...]:
        """System names, in input order."""
        return tuple(self.predictions)

    @property
    def n_documents(self) -> int:
        """Number of documents."""
        return int(self.gold.shape[0])

    @property
    def is_binary(self) -> bool:
        """True when the gold labels have exactly two classes."""
        return len(self.labels) == 2

    def default_positive(self) -> Any:
        """Return the positive class of a binary table: the larger of the two labels."""
        return self.labels[-1]

    def check_system(self, name: str, argument: str) -> str:
        """Return `name` after checking it is one of the systems."""
        if name not in self.predictions:
            avail = ", ".join(repr(s) for s in self.systems)
            raise InputError(f"`{argument}`: unknown system {name!r}. Available systems: {avail}.")
        return name

    def check_label(self, label: Any, argument: str = "positive") -> Any:
        """Return the stored label equal to `label` (numbers and strings both accepted)."""
        for lab in self.labels:
            if lab == label or str(lab) == str(label):
                return lab
        avail = ", ".join(repr(x) for x in self.labels)
        raise InputError(f"`{argument}`: {label!r} is not a gold label. Labels: {avail}.")

    def joint_counts(self, system_a: str, system_b: str, label: Any) -> JointCounts:
        """Joint outcome counts of A and B for `label` against the rest (one-vs-rest)."""
        a = self.predictions[self.check_system(system_a, "system_a")]
        b = self.predictions[self.check_system(system_b, "system_b")]
        label = self.check_label(label, "label")
        return JointCounts.from_labels(self.gold == label, a == label, b == label)

    def confusion(self, system: str) -> np.ndarray:
        """Return the confusion matrix of `system` (rows gold, columns predicted)."""
        k = len(self.labels)
        index = {lab: i for i, lab in enumerate(self.labels)}
        g = np.array([index[x] for x in self.gold])
        p = np.array([index[x] for x in self.predictions[self.check_system(system, "system")]])
        return np.bincount(g * k + p, minlength=k * k).reshape(k, k)


def _as_1d(values: Any, name: str) -> np.ndarray:
    if isinstance(values, str | bytes) or not hasattr(values, "__len__"):
        raise InputTypeError(f"`{name}` must be a sequence of labels, got {type(values).__name__}.")
    arr = np.asarray(pd.Series(list(values) if not isinstance(values, pd.Series) else values))
    if arr.ndim != 1:
        raise InputError(f"`{name}` must be one-dimensional, got shape {arr.shape}.")
    return arr


def _normalise(values: np.ndarray) -> np.ndarray:
    """Numbers stay numbers (integers when they all are), other labels become strings."""
    s = pd.Series(values)
    if pd.api.types.is_bool_dtype(s):
        return s.to_numpy(dtype=np.int64)
    if pd.api.types.is_numeric_dtype(s):
        f = s.to_numpy(dtype=float)
        if np.all(np.mod(f, 1) == 0):
            return f.astype(np.int64)
        return f
    return s.astype(str).to_numpy(dtype=object)


def _listing(values: Any, limit: int = 5) -> str:
    """At most `limit` values, then how many more: messages stay one short line."""
    values = list(values)
    shown = ", ".join(repr(x) for x in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _validate(gold: np.ndarray, preds: dict[str, np.ndarray], gold_name: str) -> PredictionTable:
    if gold.shape[0] == 0:
        raise InputError(
            "The prediction table is empty: no documents. Pass at least one gold label and "
            "one prediction per system."
        )
    lengths = {gold_name: gold.shape[0], **{k: v.shape[0] for k, v in preds.items()}}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k} ({v})" for k, v in lengths.items())
        raise InputError(
            f"Gold labels and predictions have unequal lengths: {shown}; every system needs "
            "one prediction per document."
        )
    missing = {k: int(pd.isna(v).sum()) for k, v in {gold_name: gold, **preds}.items()}
    missing = {k: v for k, v in missing.items() if v}
    if missing:
        shown = ", ".join(f"{k!r} ({v})" for k, v in missing.items())
        raise InputError(
            f"Missing labels in {shown}; every document needs a gold label and a prediction "
            "from each system (drop or fill those rows first)."
        )
    gold = _normalise(gold)
    labels = tuple(sorted(pd.unique(gold).tolist()))
    preds = {k: _normalise(v) for k, v in preds.items()}
    if len(labels) < 2:
        raise InputError(
            f"The gold labels have a single class ({labels[0]!r}); a comparison of F1 "
            "needs documents of at least two classes."
        )
    known = set(labels)
    unknown = {}
    for name, p in preds.items():
        extra = sorted(set(pd.unique(p).tolist()) - known, key=str)
        if extra:
            unknown[name] = extra
    if unknown:
        shown = "; ".join(f"{k!r}: {_listing(v)}" for k, v in unknown.items())
        raise InputError(
            f"Predicted labels absent from the gold labels ({shown}). Gold labels: "
            f"{_listing(labels)}. Check the label spelling and types, map those predictions "
            "to a gold label, or name the prediction columns (is an id column taken for a "
            "system?)."
        )
    return PredictionTable(gold=gold, predictions=preds, labels=labels)


def read_predictions(
    source: Any,
    *,
    gold: str = "gold",
    systems: Sequence[str] | None = None,
    id: str | None = None,  # noqa: A002 - the column's name in the domain
) -> PredictionTable:
    """Read a table of gold labels and per-system predictions, one row per document.

    Parameters
    ----------
    source : pandas.DataFrame or path
        A DataFrame, or a CSV / TSV, Parquet or JSON-lines file (see
        :func:`~isbetter.core.tables.read_table`).
    gold : str, default: "gold"
        Column of gold labels.
    systems : sequence of str, optional
        Prediction columns, one per system (the column names are the system
        names). Default: every column other than `gold` and `id`.
    id : str, optional
        Column of document ids (kept, not used by the models).

    Returns
    -------
    PredictionTable

    Raises
    ------
    InputError
        Unknown columns, an empty table, missing labels, a single gold class, or
        predicted labels that are not gold labels.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"gold": [1, 0, 1, 0], "svm": [1, 0, 0, 0], "nb": [1, 1, 1, 0]})
    >>> t = read_predictions(df)
    >>> t.systems, t.labels, t.n_documents
    (('svm', 'nb'), (0, 1), 4)
    """
    frame = read_table(source)
    cols = [str(c) for c in frame.columns]
    frame = frame.set_axis(cols, axis=1)
    needed = [gold] + ([id] if id else [])
    if systems is not None:
        if isinstance(systems, str):
            systems = [systems]
        needed += list(systems)
    check_columns(needed, cols)
    if systems is None:
        systems = [c for c in cols if c not in (gold, id)]
    if not systems:
        raise InputError(
            f"No prediction columns: the table has only {', '.join(repr(c) for c in cols)}; "
            "add one column of predicted labels per system."
        )
    preds = {str(s): frame[s].to_numpy() for s in systems}
    table = _validate(frame[gold].to_numpy(), preds, gold)
    return replace(
        table,
        ids=frame[id].to_numpy() if id else None,
        source=input_record(frame, source),
    )


def predictions_from_arrays(
    gold: Any,
    predictions: Mapping[str, Any] | None = None,
    /,
    **systems: Any,
) -> PredictionTable:
    """Build a :class:`PredictionTable` from arrays of labels.

    Parameters
    ----------
    gold : array-like
        Gold label of each document.
    predictions : mapping of str to array-like, optional
        Predicted labels per system name.
    **systems : array-like
        More systems by keyword, e.g. ``svm=pred_svm``.

    Returns
    -------
    PredictionTable

    Examples
    --------
    >>> t = predictions_from_arrays(["a", "b", "a"], svm=["a", "b", "b"], nb=["a", "a", "a"])
    >>> t.systems, t.labels
    (('svm', 'nb'), ('a', 'b'))
    """
    allp = {**(dict(predictions) if predictions else {}), **systems}
    if not allp:
        raise InputError("No predictions given: pass at least one system, e.g. svm=pred_svm.")
    g = _as_1d(gold, "gold")
    preds = {str(k): _as_1d(v, k) for k, v in allp.items()}
    table = _validate(g, preds, "gold")
    frame = pd.DataFrame({"gold": table.gold, **table.predictions})
    return replace(table, source=input_record(frame, what="arrays"))
