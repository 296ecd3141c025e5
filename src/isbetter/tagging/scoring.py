"""Score predicted CoNLL-U files against gold: one file pair, or a whole study.

A tagger keeps the gold tokenisation, so gold and prediction align by sentence id
and word position; a missing, extra or reordered sentence, a different number of
words, a changed word form or an empty tag (``_``) is an error naming the file, the
sentence id and the line, never a guess. OOV words are test words whose exact form
never occurs among the training file's words (Gorman & Bedrick 2019).
"""

from __future__ import annotations

import operator
import os
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import input_record
from isbetter.cv.scores import ScoreTable, read_scores
from isbetter.tagging import columns
from isbetter.tagging.baselines import fold_baselines
from isbetter.tagging.columns import read_columns
from isbetter.tagging.manifest import Fold, Manifest, read_manifest
from isbetter.tagging.reader import (
    COLUMNS,
    Sentences,
    column_index,
    read_bytes,
    read_conllu,
    word_line,
)
from isbetter.tagging.results import METRICS, FoldBaselines, TaggingScores

__all__ = ["TaggerStudy", "read_study", "score", "score_folds", "score_study"]


def _column_name(column: Any) -> str:
    i = column_index(column)
    return COLUMNS[i] if i in (3, 4) else f"column {i + 1}"


def _check_tags(s: Sentences, column: str) -> None:
    for bad in ("_", ""):
        if bad in s.tags:
            i = s.tags.index(bad)
            k = int(np.searchsorted(s.starts, i, side="right")) - 1
            line = word_line(s, k, i - int(s.starts[k]))
            raise InputError(
                f"{s.path}, sentence {s.ids[k]}, line {line}: {column} is {bad or 'empty'!r}; "
                "every word needs a tag (is this the right --tag-column?)."
            )


def _check_sentences(gold: Sentences, pred: Sentences) -> None:
    if gold.ids == pred.ids:
        return
    in_gold, in_pred = set(gold.ids), set(pred.ids)
    for k, sid in enumerate(pred.ids):
        if sid not in in_gold:
            raise InputError(
                f"{pred.path}, sentence {sid}, line {pred.lines[k]}: not in the gold file "
                f"{gold.path}; predict exactly the gold sentences, in their order."
            )
    for k, sid in enumerate(gold.ids):
        if sid not in in_pred:
            raise InputError(
                f"{pred.path}: sentence {sid} of the gold file (line {gold.lines[k]}) is "
                "missing; predict exactly the gold sentences, in their order."
            )
    k = next(k for k, (a, b) in enumerate(zip(gold.ids, pred.ids, strict=True)) if a != b)
    raise InputError(
        f"{pred.path}, sentence {pred.ids[k]}, line {pred.lines[k]}: the gold file has "
        f"sentence {gold.ids[k]} here; keep the gold order of sentences."
    )


def _check_words(gold: Sentences, pred: Sentences) -> None:
    if not np.array_equal(gold.starts, pred.starts):
        k = int(np.flatnonzero(np.diff(gold.starts) != np.diff(pred.starts))[0])
        n_gold, n_pred = (int(s.starts[k + 1] - s.starts[k]) for s in (gold, pred))
        raise InputError(
            f"{pred.path}, sentence {pred.ids[k]}, line {pred.lines[k]}: {n_pred} words, "
            f"the gold file has {n_gold}; keep the gold tokenisation."
        )
    if gold.forms != pred.forms:
        i = next(i for i, (a, b) in enumerate(zip(gold.forms, pred.forms, strict=True)) if a != b)
        k = int(np.searchsorted(pred.starts, i, side="right")) - 1
        line = word_line(pred, k, i - int(pred.starts[k]))
        raise InputError(
            f"{pred.path}, sentence {pred.ids[k]}, line {line}: word {pred.forms[i]!r}, the gold "
            f"file has {gold.forms[i]!r}; keep the gold word forms."
        )


def _tally(
    correct: np.ndarray, oov: np.ndarray | None, starts: np.ndarray, column: str
) -> TaggingScores:
    """Count the right words, sentences and OOV words."""
    wrong = np.concatenate(([0], np.cumsum(~correct)))
    per_sentence = wrong[starts[1:]] - wrong[starts[:-1]]
    return TaggingScores(
        tokens=len(correct),
        correct_tokens=int(correct.sum()),
        sentences=len(starts) - 1,
        correct_sentences=int(np.sum(per_sentence == 0)),
        oov_tokens=None if oov is None else int(oov.sum()),
        correct_oov_tokens=None if oov is None else int(np.sum(correct & oov)),
        column=column,
        correct=correct,
        oov=oov,
    )


def _score(
    gold: Sentences, pred: Sentences, vocabulary: set[str] | None, column: str
) -> TaggingScores:
    """Score by the line-by-line reader's sentences (the reference: it names any error)."""
    _check_sentences(gold, pred)
    _check_words(gold, pred)
    _check_tags(gold, column)
    _check_tags(pred, column)
    n = gold.n_words
    correct = np.fromiter(map(operator.eq, gold.tags, pred.tags), dtype=bool, count=n)
    oov = None
    if vocabulary is not None:
        oov = ~np.fromiter(map(vocabulary.__contains__, gold.forms), dtype=bool, count=n)
    return _tally(correct, oov, gold.starts, column)


class _Fold:
    """One fold's gold file and training vocabulary, read once for every system's file.

    The vectorised reader (:mod:`isbetter.tagging.columns`) scores; anything it does not
    expect sends that file pair to the line-by-line reader, which names the error.
    """

    def __init__(self, gold: Path, train: Path | None, column: Any) -> None:
        self.gold, self.train, self.column = gold, train, column
        self.tag = column_index(column)
        self.name = _column_name(column)
        self.fast = read_columns(read_bytes(gold, "gold"), self.tag)
        self.oov: np.ndarray | None = None
        self.fast_ok = self.fast is not None and columns.unique_ids(self.fast)
        if train is not None and self.fast is not None:
            train_columns = read_columns(read_bytes(train, "train"), None)
            vocab = None if train_columns is None else columns.vocabulary(train_columns)
            # OOV depends on the fold only: once for all systems
            self.oov = None if vocab is None else columns.out_of_vocabulary(self.fast, vocab)
            self.fast_ok = self.fast_ok and self.oov is not None

    def score(self, predicted: Path) -> TaggingScores:
        """Score one predicted file against the fold's gold file."""
        if self.fast_ok and self.fast is not None:
            pred = read_columns(read_bytes(predicted, "predicted"), self.tag)
            correct = None if pred is None else columns.compare(self.fast, pred)
            if correct is not None:
                return _tally(correct, self.oov, self.fast.starts, self.name)
        return self.checked(predicted)

    def checked(self, predicted: Path) -> TaggingScores:
        """Score by the line-by-line reader (the gold and vocabulary read again)."""
        gold = read_conllu(self.gold, column=self.column, argument="gold")
        pred = read_conllu(predicted, column=self.column, argument="predicted")
        vocabulary = None if self.train is None else _vocabulary(self.train)
        return _score(gold, pred, vocabulary, self.name)


def _vocabulary(train: Any) -> set[str]:
    return set(read_conllu(train, column=None, argument="train").forms)


def score(
    gold: str | os.PathLike[str],
    predicted: str | os.PathLike[str],
    train: str | os.PathLike[str] | None = None,
    *,
    column: Any = "upos",
) -> TaggingScores:
    r"""Score a predicted CoNLL-U file against its gold file: token, sentence, OOV accuracy.

    Parameters
    ----------
    gold, predicted : path
        The gold test file and the tagger's output on it (gzipped or not). They must
        hold the same sentences (by ``# sent_id``, in the same order) and the same
        words; multiword-token lines (``1-2``) and empty nodes (``8.1``) are not
        words and are not scored.
    train : path, optional
        The training file of the tagger: a test word is OOV when its exact form never
        occurs among its words. Without it, OOV accuracy is not computed
        (``oov_tokens`` is None, ``oov_accuracy`` NaN).
    column : str or int, default: "upos"
        The tag column: ``"upos"``, ``"xpos"`` or a CoNLL-U column number (4 = UPOS).

    Returns
    -------
    TaggingScores

    Raises
    ------
    InputError
        A file that is not CoNLL-U; a sentence missing, added or out of order; a
        sentence with another number of words or a changed word form; a tag ``_``.
        The message names the file, the sentence id and the line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from isbetter.tagging import score
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> row = "{}\t{}\t_\t{}\t_\t_\t0\troot\t_\t_\n"
    >>> def write(name, tags):
    ...     words = ["the", "dog", "barks"]
    ...     lines = [row.format(i + 1, w, t) for i, (w, t) in enumerate(zip(words, tags))]
    ...     (tmp / name).write_text("# sent_id = s1\n" + "".join(lines) + "\n")
    ...     return tmp / name
    >>> gold = write("gold.conllu", ["DET", "NOUN", "VERB"])
    >>> pred = write("pred.conllu", ["DET", "NOUN", "NOUN"])
    >>> s = score(gold, pred)
    >>> s.token_accuracy, s.correct_tokens, s.tokens, s.sentence_accuracy
    (0.6666666666666666, 2, 3, 0.0)
    """
    for arg, value in (("gold", gold), ("predicted", predicted), ("train", train)):
        if value is not None and not isinstance(value, str | os.PathLike):
            raise InputTypeError(f"`{arg}`: expected a path, got {type(value).__name__}.")
    train = None if train is None else Path(train)
    return _Fold(Path(gold), train, column).score(Path(predicted))


# ---- a whole study ----------------------------------------------------------------------


@dataclass(frozen=True)
class TaggerStudy:
    """A scored tagger study: the score table, its tidy frame with counts, the baselines.

    Attributes
    ----------
    table : ScoreTable
        What :func:`isbetter.rank` ranks (:func:`score_study`).
    frame : pandas.DataFrame
        One row per (dataset, system, run, fold): the three metrics and the six counts
        of :class:`TaggingScores` (what ``isbetter tagging score`` writes).
    baselines : FoldBaselines
        Wilson intervals and mid-p McNemar tests on every fold.
    manifest : Manifest
        The study's splits.
    """

    table: ScoreTable = field(repr=False)
    frame: pd.DataFrame = field(repr=False)
    baselines: FoldBaselines = field(repr=False)
    manifest: Manifest


_FIELDS = ("system", "corpus", "run", "fold")


def _template_fields(template: str, argument: str) -> set[str]:
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise InputError(f"{argument} {template!r}: not a path template ({exc}).") from None
    unknown = sorted(f for f in fields if f not in _FIELDS)
    if unknown:
        raise InputError(
            f"{argument} {template!r}: unknown placeholder {{{unknown[0]}}}; a template names "
            "the files by {system}, {corpus}, {run} and {fold}."
        )
    return fields


def _paths(
    manifest: Manifest, predictions: Any, systems: Sequence[str] | None
) -> tuple[list[str], dict[tuple[str, str, int, int], Path]]:
    """Return the systems and the predicted file of every (system, corpus, run, fold)."""
    if isinstance(predictions, str | os.PathLike):
        if systems is None:
            raise InputError(
                "`systems`: name the systems whose predictions the template "
                f"{str(predictions)!r} finds (--systems)."
            )
        templates = {s: str(predictions) for s in systems}
    elif isinstance(predictions, Mapping):
        templates = {str(k): str(v) for k, v in predictions.items()}
        if systems is not None:
            missing = [s for s in systems if s not in templates]
            if missing:
                raise InputError(
                    f"`predictions` has no template for system {missing[0]!r}; it has "
                    + ", ".join(map(repr, templates))
                    + "."
                )
            templates = {s: templates[s] for s in systems}
    else:
        raise InputTypeError(
            "`predictions`: expected a path template such as "
            "'preds/{system}/{corpus}/{run}/{fold}.conllu' or a mapping system -> template, "
            f"got {type(predictions).__name__}."
        )
    names = list(templates)
    if not names:
        raise InputError("`systems`: no system given; name two or more.")
    if len(set(names)) != len(names):
        raise InputError("`systems`: a system is named twice; name each once.")
    # a key with one value in the manifest (one corpus, one run) may be left out
    needed = {k for k in ("corpus", "run", "fold") if manifest.table[k].nunique() > 1}
    paths: dict[tuple[str, str, int, int], Path] = {}
    for system, template in templates.items():
        argument = "`predictions`" if isinstance(predictions, Mapping) else "--predictions"
        fields = _template_fields(template, argument)
        if "system" not in fields and not isinstance(predictions, Mapping) and len(names) > 1:
            raise InputError(
                f"--predictions {template!r} has no {{system}}: it gives every system the same "
                "files; put {system} into the template."
            )
        lacking = sorted(needed - fields)
        if lacking:
            raise InputError(
                f"{argument} {template!r} has no {{{lacking[0]}}}: the manifest has several "
                f"values of {lacking[0]}, each needs its own file (placeholders: {{system}}, "
                "{corpus}, {run}, {fold})."
            )
        for fold in manifest.folds():
            path = Path(
                template.format(system=system, corpus=fold.corpus, run=fold.run, fold=fold.fold)
            )
            paths[system, fold.corpus, fold.run, fold.fold] = (
                path if path.is_absolute() else manifest.root / path
            )
    return names, paths


def score_folds(
    manifest: Any,
    predictions: Any,
    *,
    systems: Sequence[str] | None = None,
    column: Any = "upos",
) -> Iterator[tuple[Fold, dict[str, TaggingScores]]]:
    """Yield every fold of a study with each system's :class:`TaggingScores` on it.

    Every predicted file is checked to exist before the first is read (a missing one
    is an error naming the system, corpus, run and fold). Each fold's gold file and
    training vocabulary are read once for all systems. Arguments as
    :func:`score_study`.
    """
    manifest = read_manifest(manifest)
    column_index(column)  # a bad column is an error before any file is read
    names, paths = _paths(manifest, predictions, systems)
    for (system, corpus, run, fold), path in paths.items():
        if not path.is_file():
            raise InputError(
                f"no predictions of system {system!r} for corpus {corpus!r}, run {run}, fold "
                f"{fold}: {path} does not exist."
            )
    for f in manifest.folds():
        scorer = _Fold(f.test, f.train, column)
        yield f, {s: scorer.score(paths[s, f.corpus, f.run, f.fold]) for s in names}


def _metrics(metrics: Any) -> tuple[str, ...]:
    """Return `metrics` as a tuple of the study's metric names, or raise naming them."""
    chosen = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    unknown = [m for m in chosen if m not in METRICS]
    if unknown or not chosen or len(set(chosen)) < len(chosen):
        raise InputError(
            f"`metrics`: expected some of {', '.join(METRICS)}, each once; got {list(chosen)!r}."
        )
    return chosen


#: why a fold is dropped from a study's table: its OOV accuracy is 0 / 0
NO_OOV = "no OOV word in the test file, OOV accuracy undefined"


def _check_oov_defined(
    frame: pd.DataFrame, metrics: tuple[str, ...], drop_incomplete: bool
) -> None:
    """Raise naming the first fold without OOV words, unless it may be dropped.

    A fold whose test words all occur in its training file has no OOV accuracy (0 / 0),
    for every system alike: ranking OOV accuracy leaves it out (with `drop_incomplete`,
    recorded as dropped with :data:`NO_OOV`) or is this error.
    """
    if "oov_accuracy" not in metrics or drop_incomplete:
        return
    undefined = frame["oov_tokens"].eq(0).to_numpy()
    if not undefined.any():
        return
    key = ["dataset", "run", "fold"]
    folds = frame.loc[undefined, key].drop_duplicates()
    first = folds.iloc[0]
    one = len(folds) == 1
    raise InputError(
        f"OOV accuracy is undefined on {len(folds)} of {len(frame[key].drop_duplicates())} "
        f"folds: corpus {first['dataset']!r}, run {first['run']}, fold {first['fold']} has no "
        "OOV word (every test word occurs in its training file). Leave "
        f"{'that fold' if one else 'those folds'} out with `drop_incomplete=True` (out of "
        "every metric ranked, not only OOV accuracy), or rank token and sentence accuracy "
        "only (`metrics`)."
    )


def read_study(
    manifest: Any,
    predictions: Any,
    *,
    systems: Sequence[str] | None = None,
    column: Any = "upos",
    metrics: Sequence[str] = METRICS,
    drop_incomplete: bool = False,
    alpha: float = 0.05,
) -> TaggerStudy:
    """Score a whole study in one pass: the score table, the tidy frame, the baselines.

    Arguments as :func:`score_study`; `alpha` is the level of the per-fold McNemar
    tests and Wilson intervals (:func:`~isbetter.tagging.baselines.fold_baselines`).

    Returns
    -------
    TaggerStudy
        Its frame holds every fold and all three metrics (``oov_accuracy`` NaN where a
        fold has no OOV word); its table only `metrics`, without the folds dropped.
    """
    metrics = _metrics(metrics)
    manifest = read_manifest(manifest)
    rows: list[dict[str, Any]] = []

    def folds() -> Iterator[tuple[Fold, dict[str, TaggingScores]]]:
        for f, scores in score_folds(manifest, predictions, systems=systems, column=column):
            rows.extend(
                {"dataset": f.corpus, "system": s, "run": f.run, "fold": f.fold} | r.to_dict()
                for s, r in scores.items()
            )
            yield f, scores

    baselines = fold_baselines(folds(), alpha=alpha)
    frame = pd.DataFrame(rows)
    _check_oov_defined(frame, metrics, drop_incomplete)
    table = read_scores(
        frame[["dataset", "system", "run", "fold", *metrics]],
        score=list(metrics),
        higher_is_better=True,
        drop_incomplete=drop_incomplete,
    )
    if len(table.dropped):  # say why: the only score a study leaves undefined is 0 / 0 OOV
        dropped = table.dropped
        why = dropped["reason"].eq("missing or infinite score")
        table = replace(table, dropped=dropped.assign(reason=dropped["reason"].mask(why, NO_OOV)))
    source = input_record(frame, manifest.path, what="tagger study")
    return TaggerStudy(
        table=replace(table, source=source), frame=frame, baselines=baselines, manifest=manifest
    )


def score_study(
    manifest: Any,
    predictions: Any,
    *,
    systems: Sequence[str] | None = None,
    column: Any = "upos",
    metrics: Sequence[str] = METRICS,
    drop_incomplete: bool = False,
) -> ScoreTable:
    """Score every tagger on every fold of a study: the score table that ranks them.

    Parameters
    ----------
    manifest : path or Manifest
        The study's manifest (``manifest.csv`` or its folder), as
        :func:`~isbetter.tagging.split` writes it.
    predictions : str or mapping
        Where each tagger's output on each test file is: a path template with the
        placeholders ``{system}``, ``{corpus}``, ``{run}`` and ``{fold}``, e.g.
        ``"preds/{system}/{corpus}/{run}/{fold}.conllu"``, relative to the
        manifest's folder or absolute; or a mapping system -> template.
    systems : sequence of str, optional
        The taggers (needed with one template; default with a mapping: its keys).
    column : str or int, default: "upos"
        The tag column scored.
    metrics : sequence of str, default: all three
        The metrics of the table, of ``token_accuracy``, ``sentence_accuracy`` and
        ``oov_accuracy``.
    drop_incomplete : bool, default: False
        Leave out the folds whose test words all occur in their training file: their
        OOV accuracy is 0 / 0 (only when `metrics` has ``oov_accuracy``; the table's
        ``dropped`` names them, and the ranking's settings say so). Without it such
        a fold is an error naming it.

    Returns
    -------
    ScoreTable
        One row per (corpus = data set, run, fold, system), the `metrics` (accuracies:
        higher is better); its ``source`` names the manifest. :func:`read_study` also gives
        the counts and the per-fold baselines.

    Raises
    ------
    InputError
        A placeholder the manifest does not fill, or one it needs missing; a predicted
        file missing for a fold (named); a fold without OOV words when ranking OOV
        accuracy without `drop_incomplete` (named); any error of :func:`score`.
    """
    return read_study(
        manifest,
        predictions,
        systems=systems,
        column=column,
        metrics=metrics,
        drop_incomplete=drop_incomplete,
    ).table
