"""Repeated k-fold splits of CoNLL-U corpora for a tagger study, with their manifest.

Szymański & Gorman (2020), after Gorman & Bedrick (2019), draw 20 × 10-fold splits
of each corpus (80/10/10 train/dev/test) and train and test every tagger on each.
:func:`split` draws them: in each run the units (sentences, or whole documents) of a
corpus are shuffled by a generator seeded from (seed, corpus, run) and cut into k
folds of about equal numbers of sentences; fold f tests on its own k-th, takes its
dev part (a share `dev` of the rest) from the folds after it and trains on the
remainder. Every sentence is tested exactly once per run.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import versions
from isbetter.core.validate import check_choice, check_positive_int, counted
from isbetter.tagging.manifest import MANIFEST_COLUMNS, MANIFEST_NAME, Manifest
from isbetter.tagging.reader import Sentences, read_conllu

__all__ = ["corpus_name", "split"]

_UNITS = ("sentence", "document")


def corpus_name(path: str | os.PathLike[str]) -> str:
    """Return a corpus file's name as a data set: the file name without .gz and .conllu.

    Examples
    --------
    >>> corpus_name("data/en_ewt-answers.conllu.gz"), corpus_name("a/b/weblog.conllu")
    ('en_ewt-answers', 'weblog')
    """
    name = Path(path).name
    for suffix in (".gz", ".conllu"):
        name = name.removesuffix(suffix)
    return name


def _corpora(corpora: Any) -> dict[str, Path]:
    """Return {name: path}: a path, a sequence of paths (named by their stems) or a mapping."""
    if isinstance(corpora, str | os.PathLike):
        corpora = [corpora]
    if isinstance(corpora, Mapping):
        named = {str(k): v for k, v in corpora.items()}
    elif isinstance(corpora, Sequence):
        named = {}
        for p in corpora:
            if not isinstance(p, str | os.PathLike):
                raise InputTypeError(
                    f"`corpora`: expected paths of CoNLL-U files, got {type(p).__name__}."
                )
            name = corpus_name(p)
            if name in named:
                raise InputError(
                    f"`corpora`: two files are named {name!r} ({named[name]}, {p}); corpus "
                    "names are the file names without .conllu/.gz: rename one, or pass a "
                    "mapping name -> path (--names)."
                )
            named[name] = p
    else:
        raise InputTypeError(
            "`corpora`: expected a CoNLL-U path, a list of them or a mapping name -> path, "
            f"got {type(corpora).__name__}."
        )
    if not named:
        raise InputError("`corpora`: no corpus given; give one or more CoNLL-U files.")
    for name in named:
        if not name or name != name.strip() or "/" in name or name in (".", ".."):
            raise InputError(f"`corpora`: {name!r} cannot name a corpus (its folder of splits).")
    return {k: Path(v) for k, v in named.items()}


@dataclass(frozen=True)
class _Units:
    """A corpus cut into units (sentences or documents): each unit's sentence indices."""

    members: list[np.ndarray]
    sizes: np.ndarray


def _units(sentences: Sentences, by: str) -> _Units:
    n = len(sentences)
    if by == "sentence":
        return _Units([np.array([i]) for i in range(n)], np.ones(n, dtype=np.int64))
    codes, _ = pd.factorize(pd.Series(sentences.documents), sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    members = np.split(order, bounds)
    return _Units(members, np.array([len(m) for m in members], dtype=np.int64))


def _rng(seed: int, corpus: str, run: int) -> np.random.Generator:
    """Return the generator of one (corpus, run): a function of seed, corpus name and run."""
    key = (zlib.crc32(corpus.encode("utf-8")), run)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _cut(sizes: np.ndarray, parts: int) -> np.ndarray:
    """Assign consecutive units to `parts` parts of about equal total size (by midpoints).

    Every part gets at least one unit (there are at least `parts` units): a unit larger
    than a part's share would leave the part after it empty by midpoints alone, so a
    part is never more than one ahead of the unit before it nor further behind the last
    part than the units left. Where no part is empty this changes nothing.
    """
    cum = np.cumsum(sizes)
    mid = (cum - sizes / 2) / cum[-1]
    part = np.minimum((mid * parts).astype(np.int64), parts - 1)
    n = len(part)
    part = np.minimum(part, np.arange(n))  # forward: at most one part further per unit...
    part = np.minimum.accumulate(part - np.arange(n)) + np.arange(n)
    # ...backward: the last unit in the last part, and at most one part back per unit
    left = np.arange(n)[::-1]  # units after each one
    return np.maximum.accumulate((np.maximum(part, parts - 1 - left) + left)[::-1])[::-1] - left


def _assign(units: _Units, folds: int, dev: float, rng: np.random.Generator) -> list[tuple]:
    """Return, per fold, the unit indices of (train, dev, test) of one run."""
    perm = rng.permutation(len(units.sizes))
    fold_of = _cut(units.sizes[perm], folds)
    by_fold = [perm[fold_of == f] for f in range(folds)]
    out = []
    for f in range(folds):
        rest = np.concatenate([by_fold[(f + g) % folds] for g in range(1, folds)])
        if dev > 0:
            cum = np.cumsum(units.sizes[rest])
            n_dev = int(np.sum(cum - units.sizes[rest] / 2 < dev * cum[-1]))
        else:
            n_dev = 0
        out.append((rest[n_dev:], rest[:n_dev], by_fold[f]))
    return out


def _check_out(out: Any) -> Path:
    if not isinstance(out, str | os.PathLike):
        raise InputTypeError(f"`out`: expected a folder path, got {type(out).__name__}.")
    path = Path(out)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InputError(
            f"`out` {str(path)!r} exists and is not an empty folder; choose a new folder "
            "(splits are never written over)."
        )
    return path


def _write(plans: list[tuple], root: Path, *, with_dev: bool) -> pd.DataFrame:
    """Write every planned (corpus, run, fold)'s files; return the manifest's rows."""
    rows = []
    for name, sentences, units, run, fold, *parts in plans:
        (root / name / str(run) / str(fold)).mkdir(parents=True, exist_ok=True)
        row: dict[str, Any] = {"corpus": name, "run": run, "fold": fold}
        for part, chosen in zip(("train", "dev", "test"), parts, strict=True):
            index = np.sort(np.concatenate([units.members[u] for u in chosen] or [[]]))
            row[f"{part}_sentences"] = len(index)
            row[part] = ""
            if part == "dev" and not with_dev:
                continue
            rel = Path(name) / str(run) / str(fold) / f"{part}.conllu"
            with open(root / rel, "w", encoding="utf-8", newline="\n") as f:
                f.writelines(sentences.blocks[i] for i in index.astype(np.int64))
            row[part] = rel.as_posix()
        rows.append(row)
    return pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS[:-2]))


def split(
    corpora: Any,
    runs: int,
    folds: int,
    *,
    dev: float = 0.1,
    by: str = "sentence",
    seed: int,
    out: str | os.PathLike[str],
) -> Manifest:
    r"""Write repeated k-fold train/dev/test splits of CoNLL-U corpora and their manifest.

    Each corpus file is one data set. In each run its units (sentences, or whole
    documents with ``by="document"``) are shuffled by a generator seeded from
    (`seed`, corpus name, run) and cut into `folds` folds of about equal numbers of
    sentences; fold f's test part is its own fold, its dev part a share `dev` of the
    rest (taken from the folds after it), its train part the remainder. Every sentence
    is tested exactly once per run; a document stays inside one part.

    Parameters
    ----------
    corpora : path, sequence of paths or mapping
        The CoNLL-U files (gzipped or not). A corpus is named by its file name
        without ``.gz`` and ``.conllu`` (``en_ewt-answers.conllu.gz`` →
        ``en_ewt-answers``); a mapping ``{name: path}`` names them.
    runs, folds : int
        Repetitions and folds per repetition (``folds`` >= 2).
    dev : float, default: 0.1
        Share of each fold's non-test sentences given to the dev part, in [0, 1);
        0: no dev part (the manifest's ``dev`` is empty, no file is written). The
        paper's 80/10/10 with 10 folds is ``dev=1/9``.
    by : {"sentence", "document"}, default: "sentence"
        The unit that is shuffled and kept whole. A sentence's document is the last
        ``# newdoc id`` before it, else its ``sent_id`` up to the last ``-``.
    seed : int
        Seed of the shuffles (non-negative); it is written into the manifest.
    out : path
        Folder to write into; it must not exist or be empty. Files:
        ``out/{corpus}/{run}/{fold}/train.conllu``, ``dev.conllu``, ``test.conllu``
        (runs and folds from 1) and ``out/manifest.csv``.

    Returns
    -------
    Manifest
        The manifest written to ``out/manifest.csv`` (paths relative to `out`).

    Raises
    ------
    InputError
        A file that is not CoNLL-U, fewer sentences (documents) than folds, an empty
        train part, a non-empty `out`; nothing is written then.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from isbetter.tagging import split
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "toy.conllu").write_text("".join(
    ...     f"# sent_id = s{i}\n1\tword\tword\tNOUN\tNN\t_\t0\troot\t_\t_\n\n"
    ...     for i in range(20)))
    >>> m = split([tmp / "toy.conllu"], runs=2, folds=5, seed=1, out=tmp / "splits")
    >>> m.table[["corpus", "run", "fold", "train_sentences", "dev_sentences",
    ...          "test_sentences"]].head(3)
      corpus  run  fold  train_sentences  dev_sentences  test_sentences
    0    toy    1     1               14              2               4
    1    toy    1     2               14              2               4
    2    toy    1     3               14              2               4
    """
    named = _corpora(corpora)
    runs = check_positive_int(runs, "runs")
    folds = check_positive_int(folds, "folds", minimum=2)
    by = check_choice(by, "by", _UNITS)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"`seed`: expected a non-negative integer, got {seed!r}.")
    if isinstance(dev, bool) or not isinstance(dev, int | float) or not 0 <= dev < 1:
        raise InputError(f"`dev`: expected a share of the non-test part in [0, 1), got {dev!r}.")
    root = _check_out(out)

    # read and split everything first: bad input writes nothing
    plans = []
    for name, path in named.items():
        sentences = read_conllu(path, column=None, blocks=True, argument="corpora")
        units = _units(sentences, by)
        if len(units.sizes) < folds:
            raise InputError(
                f"corpus {name!r} ({path}) has {counted(len(units.sizes), by)}, fewer than "
                f"the {folds} folds asked for; use fewer folds (--folds)"
                + (" or split by sentence (--by sentence)." if by == "document" else ".")
            )
        for run in range(1, runs + 1):
            parts = _assign(units, folds, float(dev), _rng(int(seed), name, run))
            for fold, (train, dev_part, test) in enumerate(parts, start=1):
                if len(train) == 0:
                    raise InputError(
                        f"corpus {name!r}, run {run}, fold {fold}: no sentences left to train "
                        "on; give a smaller dev share (--dev) or more folds."
                    )
                plans.append((name, sentences, units, run, fold, train, dev_part, test))

    table = _write(plans, root, with_dev=dev > 0)
    table["seed"] = int(seed)
    table["isbetter_version"] = versions()["isbetter"]
    manifest = Manifest(table=table, root=root.resolve(), path=root / MANIFEST_NAME)
    manifest.write()
    return manifest
