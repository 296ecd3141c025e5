"""CoNLL-U as byte arrays: the vectorised reader and comparisons that score a study fast.

A study the size of Szymański & Gorman's (6 taggers x 2 corpora x 200 folds) scores
some 60 million predicted words and reads about as many training words for the OOV
vocabularies; a reader that looks at each line in Python reads a few hundred thousand
words a second. Here a file is one numpy array of bytes: its lines, tabs and columns
are found by vectorised searches and words are compared byte for byte; the
vocabulary is a sorted array of the forms' hashes, and every form found by its hash
is compared byte for byte with the training word of that hash.

Everything here is a fast path of :mod:`isbetter.tagging.reader` and
:func:`isbetter.tagging.score`: anything it does not expect (carriage returns, a line
without ten columns, a bad word id, a sentence without exactly one ``# sent_id``, a
misaligned or untagged word) returns None, and the line-by-line reader then reads
the file again and either names the error's line or reads it as it is. Tests check
that both give the same scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Columns",
    "Vocabulary",
    "compare",
    "out_of_vocabulary",
    "read_columns",
    "unique_ids",
    "vocabulary",
]

_TAB, _NEWLINE, _HASH, _UNDERSCORE = 9, 10, 35, 95
_SENT_ID = np.frombuffer(b"# sent_id", dtype=np.uint8)
#: word ids of more digits than this are left to the line-by-line reader
_ID_DIGITS = 6

Spans = tuple[np.ndarray, np.ndarray]  # start and length of one column's field, per word


@dataclass(frozen=True)
class Columns:
    """A CoNLL-U file's words as spans of its bytes.

    Attributes
    ----------
    data : numpy.ndarray
        The file's bytes (uint8).
    id_lines : tuple of numpy.ndarray
        Start and length of each sentence's ``# sent_id`` line, in order.
    starts : numpy.ndarray
        Word offsets of the sentences (``len(ids) + 1``).
    form : tuple of numpy.ndarray
        Start and length of each word's form in `data`.
    tag : tuple of numpy.ndarray or None
        Start and length of each word's tag (None when no tag column was asked for).
    """

    data: np.ndarray
    id_lines: Spans
    starts: np.ndarray
    form: Spans
    tag: Spans | None


def _digit(values: np.ndarray) -> np.ndarray:
    return (values >= 48) & (values <= 57)


def _prefix_count(mask: np.ndarray) -> np.ndarray:
    """Return the counts of `mask` before each position (length ``len(mask) + 1``)."""
    out = np.zeros(len(mask) + 1, dtype=np.int64)
    np.cumsum(mask, out=out[1:])
    return out


def _id_values(arr: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """Return each id's integer value, -1 for ids with a non-digit; None for long ids.

    Vectorised over the lines, one step per byte (a word id has at most ``_ID_DIGITS``
    digits, a multiword token's range twice as many and a dash).
    """
    length = end - start
    if len(length) and length.max() > 2 * _ID_DIGITS + 1:  # a multiword token's 110-111
        return None
    value = np.where(length > 0, 0, -1)
    for k in range(int(length.max()) if len(length) else 0):
        more = k < length
        byte = arr[np.minimum(start + k, len(arr) - 1)].astype(np.int64)
        bad = more & ~_digit(byte)
        value = np.where(more & (value >= 0), value * 10 + byte - 48, value)
        value[bad] = -1
    return value


def _other_ids_ok(arr: np.ndarray, start: np.ndarray, end: np.ndarray) -> bool:
    """Say whether every non-word id is a multiword token's (``1-2``) or an empty node's."""
    if not len(start):
        return True
    if (end - start).max() > 2 * _ID_DIGITS + 1:
        return False
    ok = np.ones(len(start), dtype=bool)
    seps = np.zeros(len(start), dtype=np.int64)
    for k in range(int((end - start).max())):
        more = start + k < end
        byte = arr[np.minimum(start + k, len(arr) - 1)]
        sep = more & ((byte == 45) | (byte == 46))
        seps += sep
        ok &= ~more | _digit(byte) | sep
    first, last = arr[start], arr[np.maximum(end - 1, 0)]
    return bool(np.all(ok & (seps == 1) & _digit(first) & _digit(last)))


def _sentence_ids(
    arr: np.ndarray, ls: np.ndarray, le: np.ndarray, block: np.ndarray
) -> tuple[np.ndarray, Spans]:
    """Return the block of each ``# sent_id`` line, and the lines' spans."""
    comment = (ls < le) & (arr[np.minimum(ls, len(arr) - 1)] == _HASH)
    cs, ce = ls[comment], le[comment]
    is_id = ce - cs >= len(_SENT_ID)
    for k, byte in enumerate(_SENT_ID):
        is_id &= arr[np.minimum(cs + k, len(arr) - 1)] == byte
    return block[comment][is_id], (cs[is_id], ce[is_id] - cs[is_id])


def read_columns(data: bytes, tag: int | None) -> Columns | None:
    """Find the words, sentences and id lines of a CoNLL-U file's bytes; None if odd.

    Parameters
    ----------
    data : bytes
        The file (gunzipped).
    tag : int or None
        0-based index of the tag column to find (3 = UPOS), or None.
    """
    if b"\r" in data:
        return None
    if not data.endswith(b"\n"):
        data += b"\n"
    arr = np.frombuffer(data, dtype=np.uint8)
    le = np.flatnonzero(arr == _NEWLINE)
    ls = np.concatenate(([0], le[:-1] + 1))
    blank = ls == le
    block = np.cumsum(blank)  # lines of one sentence share a number
    head = arr[np.minimum(ls, len(arr) - 1)]
    token = ~blank & (head != _HASH)
    tabs = np.flatnonzero(arr == _TAB)
    ts, te = ls[token], le[token]
    t0 = np.searchsorted(tabs, ts)
    if not np.all(np.searchsorted(tabs, te) - t0 == 9):
        return None
    id_end = tabs[t0]
    values = _id_values(arr, ts, id_end)
    if values is None:
        return None
    word = values >= 0
    if not _other_ids_ok(arr, ts[~word], id_end[~word]):
        return None
    ts, t0, te, values = ts[word], t0[word], te[word], values[word]
    word_block = block[token][word]
    new = np.concatenate(([True], word_block[1:] != word_block[:-1]))
    starts = np.append(np.flatnonzero(new), len(ts))
    expected = np.arange(len(ts)) - np.repeat(starts[:-1], np.diff(starts)) + 1
    if not len(ts) or not np.array_equal(values, expected):
        return None
    id_blocks, id_lines = _sentence_ids(arr, ls, le, block)
    if not np.array_equal(id_blocks, word_block[starts[:-1]]):
        return None  # a sentence without exactly one "# sent_id" line
    form = (tabs[t0] + 1, tabs[t0 + 1] - tabs[t0] - 1)
    spans = None
    if tag is not None:
        a = tabs[t0 + tag - 1] + 1
        b = te if tag == 9 else tabs[t0 + tag]
        spans = (a, b - a)
    return Columns(data=arr, id_lines=id_lines, starts=starts, form=form, tag=spans)


def _gather(arr: np.ndarray, spans: Spans) -> np.ndarray:
    """Return the bytes of every span, concatenated."""
    start, length = spans
    total = int(length.sum())
    offsets = np.repeat(start - np.concatenate(([0], np.cumsum(length)[:-1])), length)
    return arr[offsets + np.arange(total)]


def _mismatches(a: np.ndarray, sa: Spans, b: np.ndarray, sb: Spans) -> np.ndarray:
    """Per span pair of equal lengths: the number of differing bytes."""
    diff = _gather(a, sa) != _gather(b, sb)
    bounds = np.concatenate(([0], np.cumsum(sa[1])))
    return np.diff(_prefix_count(diff)[bounds])


def _untagged(c: Columns) -> bool:
    if c.tag is None:
        return True
    start, length = c.tag
    return bool(np.any((length == 0) | ((length == 1) & (c.data[start] == _UNDERSCORE))))


def unique_ids(c: Columns) -> bool:
    """Say whether the sentence ids are well formed (``# sent_id = ...``) and unique."""
    ids = set()
    for a, n in zip(*c.id_lines, strict=True):
        key, eq, value = c.data[a + 1 : a + n].tobytes().decode("utf-8").partition("=")
        if key.strip() != "sent_id" or not eq:
            return False
        ids.add(value.strip())
    return len(ids) == len(c.id_lines[0])


def _same(a: np.ndarray, sa: Spans, b: np.ndarray, sb: Spans) -> bool:
    """Say whether two files' spans hold the same bytes, span by span."""
    return np.array_equal(sa[1], sb[1]) and not np.any(_mismatches(a, sa, b, sb))


#: multiplier of the forms' polynomial hash (odd, so every power is odd too)
_BASE = np.uint64(0x100000001B3)


def _hashes(c: Columns) -> np.ndarray:
    """Return a 64-bit polynomial hash of each form's bytes, its length mixed in."""
    start, length = c.form
    data = _gather(c.data, c.form).astype(np.uint64)
    bounds = np.concatenate(([0], np.cumsum(length)))
    position = np.arange(len(data)) - np.repeat(bounds[:-1], length)
    with np.errstate(over="ignore"):  # arithmetic modulo 2^64
        powers = np.cumprod(np.full(int(length.max()) if len(length) else 1, _BASE))
        terms = data * powers[position]
        out = np.add.reduceat(terms, bounds[:-1]) if len(data) else np.zeros(0, np.uint64)
        return out ^ (length.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))


@dataclass(frozen=True)
class Vocabulary:
    """A training file's word forms: their sorted hashes and, per hash, one form to check.

    Attributes
    ----------
    hashes : numpy.ndarray
        Sorted unique hashes of the forms (:func:`_hashes`).
    columns : Columns
        The training file.
    first : numpy.ndarray
        For each hash, the index of a word that has it (to compare the bytes).
    """

    hashes: np.ndarray
    columns: Columns
    first: np.ndarray


def vocabulary(c: Columns) -> Vocabulary | None:
    """Return a training file's vocabulary (None if a form is empty: left to the reader)."""
    if not len(c.form[1]) or not np.all(c.form[1] > 0):
        return None
    hashes, first = np.unique(_hashes(c), return_index=True)
    return Vocabulary(hashes=hashes, columns=c, first=first)


def out_of_vocabulary(gold: Columns, vocab: Vocabulary) -> np.ndarray | None:
    """Return per word of `gold`: its exact form never occurs in the vocabulary.

    A form is looked up by its hash, and a found one is compared byte for byte with
    the training word of that hash: a collision of two different forms would make a
    difference of bytes, and the answer is then left to the line-by-line scorer
    (None), so OOV is an exact string match.
    """
    if not np.all(gold.form[1] > 0):
        return None
    hashes = _hashes(gold)
    where = np.minimum(np.searchsorted(vocab.hashes, hashes), len(vocab.hashes) - 1)
    found = vocab.hashes[where] == hashes
    train = vocab.columns.form
    match = vocab.first[where[found]]
    ours = (gold.form[0][found], gold.form[1][found])
    theirs = (train[0][match], train[1][match])
    if not _same(gold.data, ours, vocab.columns.data, theirs):
        return None  # two forms of one hash (about 1 in 2^64 per pair of forms)
    return ~found


def compare(gold: Columns, pred: Columns) -> np.ndarray | None:
    """Return per word: tagged right; None if the files are not aligned.

    None when the ``# sent_id`` lines, the words per sentence or the forms differ, or
    a tag is ``_`` or empty: the line-by-line scorer then names the line. The gold
    file's ids are checked once (:func:`unique_ids`); a prediction with the same
    ``# sent_id`` lines has the same ids.
    """
    if not np.array_equal(gold.starts, pred.starts):
        return None
    if not _same(gold.data, gold.id_lines, pred.data, pred.id_lines):
        return None
    if not _same(gold.data, gold.form, pred.data, pred.form):
        return None
    if _untagged(gold) or _untagged(pred):
        return None
    if gold.tag is None or pred.tag is None:  # (_untagged said so already; for mypy)
        return None
    same_length = gold.tag[1] == pred.tag[1]
    correct = np.zeros(len(same_length), dtype=bool)
    ga = (gold.tag[0][same_length], gold.tag[1][same_length])
    pa = (pred.tag[0][same_length], pred.tag[1][same_length])
    correct[same_length] = _mismatches(gold.data, ga, pred.data, pa) == 0
    return correct
