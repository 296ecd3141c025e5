"""Read CoNLL-U files: sentences, their words, and one tag column.

CoNLL-U (https://universaldependencies.org/format.html) has ten tab-separated
columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC); comment lines start
with ``#``; a blank line ends a sentence. The scored units are *words*: lines whose
ID is an integer. Multiword-token lines (``1-2``) and empty nodes (``8.1``) are
read past. Gzipped files (``.gz``) are read transparently.

This reader is our own, line by line (str.split on the lines of each sentence), and
it checks what a scorer needs — ten columns, consecutive word ids, unique sentence
ids — naming the file, sentence and line of anything wrong. On the UD English Web
Treebank it reads about ten times as many words a second as the ``conllu`` package;
scoring reads with the vectorised :mod:`isbetter.tagging.columns`, five times faster
again, and comes back here only to name an error (``bench/bench_tagging_reader.py``).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError

__all__ = ["COLUMNS", "Sentences", "column_index", "read_conllu", "read_forms", "word_line"]

#: the ten CoNLL-U columns, in order (column numbers 1-10 in messages and ``column=``)
COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")


def column_index(column: Any) -> int:
    """Return the 0-based index of a tag column given by name (``"upos"``) or number (4).

    Numbers count from 1, as in the CoNLL-U specification (1 = ID, 2 = FORM, 4 = UPOS,
    5 = XPOS); the ID and FORM columns are not tags.

    Examples
    --------
    >>> column_index("upos"), column_index("XPOS"), column_index(4), column_index("10")
    (3, 4, 3, 9)
    """
    if isinstance(column, str) and column.strip().isdigit():
        column = int(column)
    if isinstance(column, bool) or not isinstance(column, int | str):
        raise InputTypeError(
            f"`column`: expected a column name ({', '.join(COLUMNS[2:])}) or number (3-10), "
            f"got {type(column).__name__}."
        )
    if isinstance(column, str):
        name = column.strip().lower()
        if name not in COLUMNS[2:]:
            raise InputError(
                f"`column`: unknown CoNLL-U tag column {column!r}; expected one of "
                f"{', '.join(COLUMNS[2:])} or a column number 3-10."
            )
        return COLUMNS.index(name)
    if not 3 <= column <= 10:
        raise InputError(
            f"`column`: CoNLL-U tag columns are numbered 3-10 (4 = UPOS, 5 = XPOS), got {column}."
        )
    return column - 1


@dataclass(frozen=True)
class Sentences:
    """The sentences of one CoNLL-U file: ids, documents, words and one tag column.

    Attributes
    ----------
    path : str
        The file read.
    ids : tuple of str
        Sentence ids (``# sent_id``; a sentence without one is ``"#N"``, its number).
    documents : tuple of str
        Each sentence's document: the last ``# newdoc id`` before it, else its id
        up to the last ``-`` (EWT ``answers-20070404104007AAY1Chs_ans-0001`` →
        ``answers-20070404104007AAY1Chs_ans``), else the id itself.
    starts : numpy.ndarray
        Word offsets: sentence ``i`` holds words ``starts[i]:starts[i + 1]``.
    forms : list of str
        Word forms of every sentence, concatenated.
    tags : list of str
        The chosen tag column of every word (empty if no column was asked for).
    lines : numpy.ndarray
        Line number (from 1) of each sentence's first line.
    blocks : list of str
        Each sentence's text as in the file, comments included, ending in a blank line
        (only when read with ``blocks=True``, for splitting; else empty).
    """

    path: str
    ids: tuple[str, ...]
    documents: tuple[str, ...] = field(repr=False)
    starts: np.ndarray = field(repr=False)
    forms: list[str] = field(repr=False)
    tags: list[str] = field(repr=False)
    lines: np.ndarray = field(repr=False)
    blocks: list[str] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        """Return the number of sentences."""
        return len(self.ids)

    @property
    def n_words(self) -> int:
        """Number of words (multiword tokens and empty nodes not counted)."""
        return len(self.forms)


def read_bytes(path: Path, argument: str) -> bytes:
    """Return a file's bytes, gunzipped when they are gzip's (whatever the file's name)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise InputError(f"{argument} {str(path)!r}: no such file.") from None
    except IsADirectoryError:
        raise InputError(f"{argument} {str(path)!r} is a directory, not a CoNLL-U file.") from None
    if data[:2] == b"\x1f\x8b":  # gzip's magic number
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{argument} {str(path)!r}: broken gzip file ({exc}).") from None
    return data


def _text(path: Path, argument: str) -> str:
    data = read_bytes(path, argument)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{argument} {str(path)!r}: not UTF-8 text (byte {exc.start}); CoNLL-U is UTF-8."
        ) from None


def _blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    """Yield each sentence's first line number and its lines (blank lines separate them)."""
    lines = text.replace("\r\n", "\n").split("\n")
    start = 0
    for i, line in enumerate(lines):
        if not line.strip():
            if i > start:
                yield start + 1, lines[start:i]
            start = i + 1
    if len(lines) > start:
        yield start + 1, lines[start:]


def _not_conllu(where: str, found: int) -> InputError:
    hint = " (CoNLL-2003 has 4)" if found == 4 else ""
    return InputError(
        f"{where}: expected CoNLL-U's 10 tab-separated columns, found {found}{hint}; "
        "give a CoNLL-U file (https://universaldependencies.org/format.html)."
    )


#: a sentence without a ``# newdoc`` comment stays in the document before it
_SAME_DOCUMENT = object()


def _sentence(
    path: Path, number: int, first: int, lines: list[str], tag: int | None, out: tuple
) -> tuple[str | None, Any, int]:
    """Read one sentence's lines: append its words' forms (and tags) to `out`.

    Return its ``sent_id`` (None without one), its ``newdoc id`` (``_SAME_DOCUMENT``
    without one) and its number of words.
    """
    forms, tags = out
    sent_id: str | None = None
    newdoc: Any = _SAME_DOCUMENT
    n = 0
    for offset, line in enumerate(lines):
        if line.startswith("#"):
            key, eq, value = line[1:].partition("=")
            key = key.strip()
            if eq and key == "sent_id":
                sent_id = value.strip()
            elif key in ("newdoc", "newdoc id"):
                newdoc = value.strip() if eq else None
            continue
        parts = line.split("\t")
        wid = parts[0]
        if len(parts) == 10 and wid.isdigit():
            n += 1
            if int(wid) == n:
                forms.append(parts[1])
                if tag is not None:
                    tags.append(parts[tag])
                continue
        elif len(parts) == 10 and _is_range_or_node(wid):
            continue
        where = f"{path}, sentence {sent_id or f'#{number}'}, line {first + offset}"
        if len(parts) != 10:
            raise _not_conllu(where, len(parts))
        if wid.isdigit():
            raise InputError(
                f"{where}: word id {wid}, expected {n} (word ids count 1, 2, ... in each sentence)."
            )
        raise InputError(
            f"{where}: {wid!r} is not a CoNLL-U id (a word 1, a multiword token 1-2 or an "
            "empty node 1.1)."
        )
    return sent_id, newdoc, n


def read_conllu(
    path: str | os.PathLike[str],
    *,
    column: Any = "upos",
    blocks: bool = False,
    argument: str = "path",
) -> Sentences:
    """Read a CoNLL-U file (gzipped or not): its sentences, words and one tag column.

    Parameters
    ----------
    path : path
        The file.
    column : str, int or None, default: "upos"
        The tag column to keep (:func:`column_index`); None keeps none.
    blocks : bool, default: False
        Keep each sentence's text (for writing splits).
    argument : str, default: "path"
        How error messages name the file's argument (e.g. ``"gold"``).

    Returns
    -------
    Sentences

    Raises
    ------
    InputError
        No such file; a line without 10 tab-separated columns; a bad or
        non-consecutive word id; a duplicate sentence id; no sentences. Each message
        names the file, the sentence id and the line.
    """
    if not isinstance(path, str | os.PathLike):
        raise InputTypeError(f"`{argument}`: expected a path, got {type(path).__name__}.")
    path = Path(path)
    tag = None if column is None else column_index(column)
    out: tuple[list[str], list[str]] = ([], [])
    ids: list[str] = []
    documents: list[str] = []
    starts = [0]
    firsts: list[int] = []
    kept: list[str] = []
    seen: dict[str, int] = {}
    newdoc = None
    for first, lines in _blocks(_text(path, argument)):
        sent_id, doc, n = _sentence(path, len(ids) + 1, first, lines, tag, out)
        newdoc = newdoc if doc is _SAME_DOCUMENT else doc
        if n == 0 and all(line.startswith("#") for line in lines):
            continue  # comments only (e.g. a file's header): no sentence
        sent_id = sent_id if sent_id is not None else f"#{len(ids) + 1}"
        if sent_id in seen:
            raise InputError(
                f"{path}, sentence {sent_id}, line {first}: duplicate sentence id (first at "
                f"line {seen[sent_id]}); sentence ids must be unique."
            )
        seen[sent_id] = first
        ids.append(sent_id)
        documents.append(newdoc if newdoc is not None else sent_id.rpartition("-")[0] or sent_id)
        starts.append(len(out[0]))
        firsts.append(first)
        if blocks:
            kept.append("\n".join(lines) + "\n\n")
    if not ids:
        raise InputError(f"{argument} {str(path)!r}: no sentences; is this a CoNLL-U file?")
    return Sentences(
        path=str(path),
        ids=tuple(ids),
        documents=tuple(documents),
        starts=np.asarray(starts, dtype=np.int64),
        forms=out[0],
        tags=out[1],
        lines=np.asarray(firsts, dtype=np.int64),
        blocks=kept,
    )


def _is_range_or_node(wid: str) -> bool:
    """Say whether `wid` is a multiword-token id (``1-2``) or an empty node's (``8.1``)."""
    for sep in ("-", "."):
        a, s, b = wid.partition(sep)
        if s and a.isdigit() and b.isdigit():
            return True
    return False


def read_forms(path: str | os.PathLike[str], *, argument: str = "train") -> set[str]:
    """Return the set of word forms of a CoNLL-U file (the vocabulary OOV is judged by).

    Parameters
    ----------
    path : path
        The file (gzipped or not).
    argument : str, default: "train"
        How error messages name the file's argument.
    """
    return set(read_conllu(path, column=None, argument=argument).forms)


def word_line(sentences: Sentences, sentence: int, word: int) -> int:
    """Return the line number (from 1) of word `word` (from 0) of sentence `sentence`.

    For error messages: the file is read again, so it costs a read.
    """
    first = int(sentences.lines[sentence])
    lines = _text(Path(sentences.path), "path").replace("\r\n", "\n").split("\n")
    n = -1
    for offset, line in enumerate(lines[first - 1 :]):
        if line.split("\t", 1)[0].isdigit():
            n += 1
            if n == word:
                return first + offset
    return first
