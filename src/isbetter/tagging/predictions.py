"""Write a tagger's output as CoNLL-U: the gold file with one tag column replaced.

A tagger run on a study's test file must keep its sentences, ids and words, which is
what :func:`isbetter.tagging.score` checks; the simplest way to keep them is to write
the predicted tags into a copy of the test file itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from isbetter.core.errors import InputError, InputTypeError
from isbetter.tagging.reader import column_index, read_bytes, read_conllu

__all__ = ["write_tagged"]


def write_tagged(
    test: str | os.PathLike[str],
    tags: Sequence[str] | Sequence[Sequence[str]],
    out: str | os.PathLike[str],
    *,
    column: Any = "upos",
) -> Path:
    r"""Write `test` with its words' `column` replaced by `tags`; return the path written.

    Parameters
    ----------
    test : path
        The gold test file (gzipped or not) the tagger was run on.
    tags : sequence of str, or sequence of sequences of str
        The predicted tags: one per word of the file (multiword tokens and empty nodes
        are not words), flat or one sequence per sentence.
    out : path
        The file to write (plain CoNLL-U; its folder is made if missing).
    column : str or int, default: "upos"
        The tag column replaced.

    Raises
    ------
    InputError
        Another number of tags than words (per sentence, when given per sentence), or
        a tag that is empty, ``_`` or holds a tab or newline.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from isbetter.tagging import score, write_tagged
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "gold.conllu").write_text(
    ...     "# sent_id = s1\n1\tdogs\t_\tNOUN\t_\t_\t0\troot\t_\t_\n"
    ...     "2\tbark\t_\tVERB\t_\t_\t1\tdep\t_\t_\n\n")
    >>> pred = write_tagged(tmp / "gold.conllu", [["NOUN", "NOUN"]], tmp / "pred.conllu")
    >>> score(tmp / "gold.conllu", pred).token_accuracy
    0.5
    """
    index = column_index(column)
    gold = read_conllu(test, column=None, argument="test")
    flat = _flat(tags, gold.starts)
    bad = next((t for t in flat if not t or t == "_" or "\t" in t or "\n" in t), None)
    if bad is not None:
        raise InputError(f"`tags`: {bad!r} is not a tag (empty, _, or with a tab or newline).")
    lines = read_bytes(Path(test), "test").decode("utf-8").split("\n")
    k = 0
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[index] = flat[k]
            lines[i] = "\t".join(cols)
            k += 1
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _flat(tags: Any, starts: Any) -> list[str]:
    if isinstance(tags, str) or not isinstance(tags, Sequence):
        raise InputTypeError(f"`tags`: expected a sequence of tags, got {type(tags).__name__}.")
    n_words, n_sentences = int(starts[-1]), len(starts) - 1
    if tags and not isinstance(tags[0], str):
        if len(tags) != n_sentences:
            raise InputError(
                f"`tags`: {len(tags)} sentences of tags for the file's {n_sentences} sentences."
            )
        for k, sentence in enumerate(tags):
            if len(sentence) != starts[k + 1] - starts[k]:
                raise InputError(
                    f"`tags`: sentence {k + 1} has {len(sentence)} tags for its "
                    f"{starts[k + 1] - starts[k]} words."
                )
        return [str(t) for sentence in tags for t in sentence]
    if len(tags) != n_words:
        raise InputError(f"`tags`: {len(tags)} tags for the file's {n_words} words.")
    return [str(t) for t in tags]
