"""The intermediate table every report is made of, and how its cells are formatted.

A result becomes one :class:`ReportTable` (:mod:`isbetter.report.build`): a
title, display columns and rows of raw values, notes, the signature line, and
the machine-readable forms (flat ``records`` for CSV, nested ``data`` for JSON).
Each renderer (:mod:`isbetter.report.render`) turns the table into one format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from isbetter.inference.decisions import RELATIONS, latex_symbol, symbol

__all__ = [
    "MISSING",
    "Column",
    "ReportTable",
    "display_cells",
    "format_cell",
    "is_missing",
    "record_value",
]

CellKind = Literal[
    "text", "number", "probability", "percent", "signed", "interval", "relation", "formatted"
]
Target = Literal["text", "latex", "html"]

#: the one token of a missing value in a table cell (text, Markdown, HTML; ``--`` in LaTeX)
MISSING = "–"


@dataclass(frozen=True)
class Column:
    """A display column: the key of its value in each row, a header, how to format it.

    Attributes
    ----------
    key : str
        Key of the value in each row.
    header : str
        Column header.
    kind : str
        ``"text"``, ``"number"`` (``digits`` decimals), ``"probability"``
        (4 decimals), ``"percent"``, ``"signed"`` (with a sign), ``"interval"``
        (a ``(low, high)`` pair), ``"relation"`` (a decision key, typeset
        per format) or ``"formatted"`` (a number already formatted as text,
        such as the bound ``< 0.06``: aligned as a number, never wrapped).
    digits : int
        Decimals of numbers.
    group : str
        Heading shared by consecutive columns (a metric over its ``>``, ``≈``,
        ``<`` columns; "p-value" over the tests): LaTeX sets it above them, with
        `short` under it, and never splits a group across panels.
    short : str
        The header under the group in LaTeX (``>`` for ``accuracy >``); default: `header`.
    """

    key: str
    header: str
    kind: CellKind = "text"
    digits: int = 3
    group: str = ""
    short: str = ""

    @property
    def numeric(self) -> bool:
        """Right-aligned in tables."""
        return self.kind not in ("text", "relation")


@dataclass(frozen=True)
class ReportTable:
    """One report: what every renderer needs, and nothing format-specific.

    Attributes
    ----------
    title : str
        One line naming the method, the systems, the metric and its direction.
    columns : tuple of Column
        The display columns.
    rows : tuple of dict
        Raw values per display row, keyed by the columns' keys.
    notes : tuple of str
        Lines shown under the table (estimates, tests, diagnostics, legends).
    signature : str
        The reproducibility signature.
    records : tuple of dict
        Flat machine-readable rows (CSV).
    data : dict
        Nested JSON-safe data (the result's summary).
    """

    title: str
    columns: tuple[Column, ...]
    rows: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()
    signature: str = ""
    records: tuple[dict[str, Any], ...] = field(default=(), repr=False)
    data: dict[str, Any] = field(default_factory=dict, repr=False)


def is_missing(value: Any) -> bool:
    """Tell a missing value: None or NaN (a float, NumPy's included)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def record_value(value: Any) -> Any:
    """Return a record's value as CSV writes it: a missing value is an empty field."""
    return "" if is_missing(value) else value


def format_cell(column: Column, value: Any, target: Target = "text") -> str:
    """Format one value for `target` (``"latex"`` typesets relations and signs).

    A missing value (None, NaN, an interval with a missing bound) is :data:`MISSING`
    in every kind of column, ``--`` in LaTeX.
    """
    if column.kind == "interval" and isinstance(value, tuple | list):
        value = None if any(is_missing(v) for v in value) else value
    if is_missing(value):
        return "--" if target == "latex" else MISSING
    if column.kind == "relation":
        if value not in RELATIONS:
            return str(value)
        return latex_symbol(value) if target == "latex" else symbol(value)
    if column.kind == "interval":
        low, high = value
        return f"[{_number(low, column.digits, True)}, {_number(high, column.digits, True)}]"
    if column.kind == "probability":
        return f"{float(value):.4f}"
    if column.kind == "percent":
        return f"{100 * float(value):.1f}%"  # LaTeX: escaped with every other cell
    if column.kind in ("number", "signed"):
        return _number(value, column.digits, column.kind == "signed")
    return str(value)


def display_cells(table: ReportTable, target: Target = "text") -> list[list[str]]:
    """Return the formatted cells of every display row of `table`, column by column."""
    return [[format_cell(c, row.get(c.key), target) for c in table.columns] for row in table.rows]


def _number(value: Any, digits: int, signed: bool) -> str:
    x = float(value)
    if math.isinf(x):
        return ("+" if signed and x > 0 else "-" if x < 0 else "") + "inf"
    if x != 0 and abs(x) < 10 ** (-digits):
        return f"{x:+.1e}" if signed else f"{x:.1e}"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
