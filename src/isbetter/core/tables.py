"""Read tables from files: CSV / TSV (delimiter sniffed), Parquet, JSON lines; name their rows.

:func:`read_table` is the one reader of every file the toolkit takes (scores,
predictions); :func:`first_line` and :func:`where` let messages name the file
lines of bad rows, as an editor shows them, instead of 0-based positions.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import plural

__all__ = ["first_line", "read_table", "where"]

#: compressed text tables: suffix -> opener of the decompressed text (pandas reads them too)
_COMPRESSED = {".gz": "gzip", ".bz2": "bz2", ".xz": "lzma"}


def _format_suffix(path: Path) -> str:
    """Return the suffix naming the format, under any compression (``s.csv.gz``: ``.csv``)."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _delimiter(path: Path) -> str:
    """Return the delimiter of a text table: a tab, semicolon or comma, sniffed from its start."""
    module = _COMPRESSED.get(path.suffix.lower())
    opener: Any = open if module is None else importlib.import_module(module).open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        head = fh.read(8192)
    first = head.splitlines()[0] if head else ""
    counts = {d: first.count(d) for d in ("\t", ";", ",")}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] else ","


def read_table(source: Any, *, argument: str = "source", text: Sequence[str] = ()) -> pd.DataFrame:
    """Read a DataFrame, or a CSV / TSV / Parquet / JSON-lines file named by a path.

    Text tables are read as UTF-8 with their delimiter (comma, tab or semicolon)
    sniffed from the header line, whatever the file's extension; ``.parquet`` /
    ``.pq`` files with pyarrow; ``.jsonl`` / ``.ndjson`` files as JSON lines, and
    ``.json`` files as JSON lines or as one array of records. Text tables may be
    compressed (``.gz``, ``.bz2``, ``.xz``, e.g. ``scores.csv.gz``). The columns named
    in `text` are read from text tables as written (``1.10`` stays ``"1.10"``).
    """
    if isinstance(source, pd.DataFrame):
        return source
    if not isinstance(source, str | os.PathLike):
        raise InputTypeError(
            f"`{argument}` must be a pandas DataFrame or the path of a CSV, TSV, Parquet or "
            f"JSON-lines file, got {type(source).__name__}."
        )
    path = Path(source)
    if path.is_dir():
        raise InputError(f"{str(path)!r} is a directory; give the path of a table file.")
    if not path.is_file():
        raise InputError(f"No such file: {str(path)!r}.")
    suffix = _format_suffix(path)
    try:
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path)
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(path, lines=True, precise_float=True)
        if suffix == ".json":
            return _read_json(path)
        return pd.read_csv(path, sep=_delimiter(path), dtype=dict.fromkeys(text, str) or None)
    except ImportError as exc:
        raise InputError(
            f"Reading {suffix} files needs pyarrow; install it with "
            "`pip install isbetter[parquet]`."
        ) from exc
    except PermissionError as exc:
        raise InputError(f"Cannot read {str(path)!r}: permission denied.") from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            f"Cannot read {str(path)!r}: it is not UTF-8 text ({exc.reason} at byte "
            f"{exc.start}); save it as UTF-8."
        ) from exc
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        reason = str(exc).strip().splitlines()[-1]
        raise InputError(f"Cannot read {str(path)!r} as a table: {reason}.") from exc


def _read_json(path: Path) -> pd.DataFrame:
    """Read a ``.json`` file: JSON lines (one record per line) or one array of records."""
    with open(path, encoding="utf-8") as fh:
        start = fh.read(4096).lstrip()[:1]
    if start == "[":
        return pd.read_json(path, orient="records", precise_float=True)
    return pd.read_json(path, lines=True, precise_float=True)


def first_line(source: Any) -> tuple[int, str] | None:
    """How a file names its first row: line 2 below a header, line 1 in JSON lines, row 1."""
    if isinstance(source, pd.DataFrame):
        return None
    suffix = _format_suffix(Path(source))
    if suffix in (".parquet", ".pq", ".json"):
        return 1, "row"  # no lines to speak of (or an array of records): rows from 1
    return (1, "line") if suffix in (".jsonl", ".ndjson") else (2, "line")


def where(
    index: pd.Index,
    first: tuple[int, str] | None,
    limit: int = 5,
    details: Sequence[str] | None = None,
) -> str:
    """Name at most `limit` rows: file lines (or rows from 1) of a file, labels of a DataFrame.

    ``line 7``, ``lines 7, 9``; with `details` (one per row, e.g. the bad value),
    each row with its own: ``line 12: '0.95x', line 15: 'n/a'``.

    Examples
    --------
    >>> where(pd.Index([5]), (2, "line")), where(pd.Index([5, 7]), (2, "line"))
    ('line 7', 'lines 7, 9')
    >>> where(pd.Index([10]), (2, "line"), details=[": '0.95x'"])
    "line 12: '0.95x'"
    """
    unit = "index label" if first is None else first[1]
    shown = index[:limit]
    names = [str(i) if first is None else str(int(i) + first[0]) for i in shown]
    more = " ..." if len(index) > limit else ""
    if details is not None:
        return ", ".join(f"{unit} {n}{d}" for n, d in zip(names, details, strict=False)) + more
    return f"{plural(len(index), unit)} {', '.join(names)}{more}"
