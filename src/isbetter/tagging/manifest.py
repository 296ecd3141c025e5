"""The manifest of a tagger study's splits: one row per (corpus, run, fold), the files.

:func:`isbetter.tagging.split` writes it as ``DIR/manifest.csv``; scoring reads it
back. Columns: ``corpus, run, fold`` (runs and folds numbered from 1), ``train, dev,
test`` (paths relative to the manifest's folder; ``dev`` empty when the split has no
dev part), ``train_sentences, dev_sentences, test_sentences``, ``seed`` and
``isbetter_version``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError, InputTypeError

__all__ = ["MANIFEST_COLUMNS", "Fold", "Manifest", "read_manifest"]

#: the manifest's columns, in order
MANIFEST_COLUMNS = (
    "corpus",
    "run",
    "fold",
    "train",
    "dev",
    "test",
    "train_sentences",
    "dev_sentences",
    "test_sentences",
    "seed",
    "isbetter_version",
)

#: the file name :func:`isbetter.tagging.split` gives the manifest in its folder
MANIFEST_NAME = "manifest.csv"


@dataclass(frozen=True)
class Fold:
    """One (corpus, run, fold) of a study: its three files, as absolute paths.

    Attributes
    ----------
    corpus : str
        The corpus (the data set of the score table).
    run, fold : int
        Numbered from 1.
    train, test : pathlib.Path
        The training and test files.
    dev : pathlib.Path or None
        The dev file (None when the split has no dev part).
    """

    corpus: str
    run: int
    fold: int
    train: Path
    dev: Path | None
    test: Path


@dataclass(frozen=True)
class Manifest:
    """The splits of a tagger study: the manifest table and the folder it is in.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (corpus, run, fold), the columns of :data:`MANIFEST_COLUMNS`.
    root : pathlib.Path
        The manifest's folder; the table's paths are relative to it.
    path : pathlib.Path or None
        The manifest file (None for a manifest not read from or written to a file).
    """

    table: pd.DataFrame = field(repr=False)
    root: Path
    path: Path | None = None

    @property
    def corpora(self) -> tuple[str, ...]:
        """Corpus names, in order of appearance."""
        return tuple(pd.unique(self.table["corpus"]))

    def __len__(self) -> int:
        """Return the number of (corpus, run, fold) rows."""
        return len(self.table)

    def folds(self) -> Iterator[Fold]:
        """Yield every (corpus, run, fold) with its files as absolute paths."""
        for row in self.table.itertuples(index=False):
            dev = row.dev if isinstance(row.dev, str) and row.dev else None
            yield Fold(
                corpus=str(row.corpus),
                run=int(row.run),
                fold=int(row.fold),
                train=self.root / str(row.train),
                dev=None if dev is None else self.root / dev,
                test=self.root / str(row.test),
            )

    def write(self) -> Path:
        """Write the table to :attr:`path` (CSV) and return the path."""
        if self.path is None:
            raise InputError("This manifest has no `path` to be written to.")
        self.table.to_csv(self.path, index=False)
        return self.path


def read_manifest(source: Any) -> Manifest:
    """Read a study's manifest (the CSV :func:`isbetter.tagging.split` writes).

    Parameters
    ----------
    source : path, Manifest
        The manifest file, or its folder (``DIR/manifest.csv`` is read); a
        :class:`Manifest` is returned as it is.

    Returns
    -------
    Manifest

    Raises
    ------
    InputError
        No such file; missing columns; duplicate (corpus, run, fold) rows.
    """
    if isinstance(source, Manifest):
        return source
    if not isinstance(source, str | os.PathLike):
        raise InputTypeError(
            f"`manifest`: expected the path of a manifest.csv, got {type(source).__name__}."
        )
    path = Path(source)
    if path.is_dir():
        path = path / MANIFEST_NAME
    if not path.is_file():
        raise InputError(f"manifest {str(path)!r}: no such file; write one with `tagging split`.")
    try:
        table = pd.read_csv(path, dtype={"corpus": str, "train": str, "dev": str, "test": str})
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"manifest {str(path)!r}: not a CSV table ({exc}).") from None
    missing = [c for c in MANIFEST_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(
            f"manifest {str(path)!r}: missing column(s) {', '.join(missing)}; a manifest has "
            f"{', '.join(MANIFEST_COLUMNS)}."
        )
    if table.empty:
        raise InputError(f"manifest {str(path)!r}: no rows.")
    table["dev"] = table["dev"].fillna("")
    twice = table.duplicated(["corpus", "run", "fold"])
    if twice.any():
        row = table[twice].iloc[0]
        raise InputError(
            f"manifest {str(path)!r}: corpus {row['corpus']!r}, run {row['run']}, fold "
            f"{row['fold']} is listed twice; each (corpus, run, fold) once."
        )
    return Manifest(table=table, root=path.parent.resolve(), path=path)
