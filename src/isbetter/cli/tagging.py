"""``isbetter tagging split|score``: a tagger study's splits, and its per-fold scores.

``split`` writes repeated k-fold train/dev/test splits of CoNLL-U corpora and their
manifest; the taggers are trained and run on them outside isbetter; ``score`` scores
their predicted files against the gold test files (token, sentence and OOV accuracy
per corpus, run, fold and tagger) into the table ``isbetter rank`` reads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from isbetter.cli.common import Parser, formatter


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand, its two actions and their arguments."""
    p = sub.add_parser(
        "tagging",
        help="tagger studies from CoNLL-U files: the splits, then the scores of every fold",
        description=" ".join(__doc__.split("\n\n")[1].replace("``", "").split()),
        formatter_class=formatter,
    )
    actions = p.add_subparsers(
        dest="tagging_command", required=True, metavar="ACTION", parser_class=Parser
    )
    _add_split(actions)
    _add_score(actions)


def _add_split(actions: argparse._SubParsersAction) -> None:
    s = actions.add_parser(
        "split",
        help="write repeated k-fold train/dev/test splits of CoNLL-U corpora and a manifest",
        description=(
            "Each corpus file is one data set, named by its file name without .conllu and .gz "
            "(or by --names). In each run its sentences (or whole documents) are shuffled "
            "from the seed and cut into --folds folds; each fold tests on its own part, takes "
            "--dev of the rest as dev and trains on the remainder. Writes "
            "OUT/CORPUS/RUN/FOLD/{train,dev,test}.conllu and OUT/manifest.csv."
        ),
        formatter_class=formatter,
    )
    s.add_argument("corpora", nargs="+", type=Path, metavar="CORPUS.conllu[.gz]")
    s.add_argument("--runs", type=int, required=True, help="repetitions of the k-fold split")
    s.add_argument("--folds", type=int, required=True, help="folds per repetition (2 or more)")
    s.add_argument("--seed", type=int, required=True, help="seed of the shuffles (recorded)")
    s.add_argument(
        "--by",
        default="sentence",
        choices=("sentence", "document"),
        help="the unit kept whole: a document is the last '# newdoc id', else the sent_id up "
        "to its last '-'",
    )
    s.add_argument(
        "--dev", type=float, default=0.1, help="share of the non-test part for dev (0: none)"
    )
    s.add_argument(
        "--names",
        nargs="+",
        default=None,
        metavar="NAME",
        help="the corpora's names, one per file (default: the file names without .conllu/.gz)",
    )
    s.add_argument("--out", type=Path, required=True, help="a new (or empty) folder")


def _add_score(actions: argparse._SubParsersAction) -> None:
    c = actions.add_parser(
        "score",
        help="score every tagger on every fold of a study: the table isbetter rank reads",
        description=(
            "Score each system's predicted CoNLL-U file of every (corpus, run, fold) of the "
            "manifest against the gold test file: token, sentence and OOV accuracy (OOV: a "
            "test word whose form never occurs in that fold's training file) with their "
            "counts, one row per (dataset, system, run, fold). Rank them with "
            "'isbetter rank SCORES.csv --metric token_accuracy ...', or in one step with "
            "'isbetter rank MANIFEST --predictions TEMPLATE --systems ...'."
        ),
        formatter_class=formatter,
    )
    c.add_argument("manifest", type=Path, help="the study's manifest.csv (or its folder)")
    c.add_argument(
        "--systems", nargs="+", required=True, metavar="SYSTEM", help="the taggers to score"
    )
    add_prediction_args(c, required=True)
    c.add_argument(
        "--output", type=Path, default=None, help="write the scores here (CSV; default: stdout)"
    )
    c.add_argument(
        "--baselines",
        type=Path,
        default=None,
        metavar="FILE.csv",
        help="also write Gorman & Bedrick's per-fold baselines here: each pair's mid-p McNemar "
        "test on tokens and both taggers' Wilson intervals",
    )
    c.add_argument(
        "--alpha", type=float, default=0.05, help="level of the McNemar tests and intervals"
    )


def add_prediction_args(p: argparse._ActionsContainer, *, required: bool) -> None:
    """Add where a study's predictions are, which systems and which tag column (also rank's)."""
    p.add_argument(
        "--predictions",
        required=required,
        default=None,
        metavar="TEMPLATE",
        help="each system's predicted file of each fold: a path template with {system}, "
        "{corpus}, {run} and {fold}, relative to the manifest's folder or absolute, e.g. "
        "'preds/{system}/{corpus}/{run}/{fold}.conllu'",
    )
    p.add_argument(
        "--tag-column",
        default="upos",
        metavar="COL",
        help="the tag column scored: upos, xpos or a CoNLL-U column number (4 = UPOS)",
    )


def tag_column(value: str) -> int | str:
    """Return --tag-column as the scorers take it, or an error naming the flag."""
    from isbetter.core.errors import InputError
    from isbetter.tagging.reader import column_index

    try:
        column_index(value)
    except InputError as exc:
        raise InputError(f"--tag-column {value!r}: {str(exc).split(': ', 1)[1]}") from None
    return int(value) if value.strip().isdigit() else value


def _split(args: argparse.Namespace) -> int:
    from isbetter.core.errors import InputError
    from isbetter.core.validate import counted
    from isbetter.tagging import split

    corpora: object = args.corpora
    if args.names is not None:
        if len(args.names) != len(args.corpora):
            raise InputError(
                f"--names gives {counted(len(args.names), 'name')} for "
                f"{counted(len(args.corpora), 'corpus', 'corpora')}; give one name per file."
            )
        if len(set(args.names)) != len(args.names):
            raise InputError("--names: a name is given twice; name each corpus once.")
        corpora = dict(zip(args.names, args.corpora, strict=True))
    manifest = split(
        corpora, args.runs, args.folds, dev=args.dev, by=args.by, seed=args.seed, out=args.out
    )
    t = manifest.table
    print(
        f"wrote {counted(len(t), 'split')} of {counted(len(manifest.corpora), 'corpus', 'corpora')}"
        f" ({args.runs} x {args.folds} folds by {args.by}) and {manifest.path}",
        file=sys.stderr,
    )
    return 0


def _score(args: argparse.Namespace) -> int:
    from isbetter.cli.common import check_destinations
    from isbetter.core.validate import counted
    from isbetter.tagging import read_study

    check_destinations(args)
    if args.baselines is not None:
        from isbetter.core.writable import check_writable_file

        check_writable_file(args.baselines, "--baselines")
    study = read_study(
        args.manifest,
        args.predictions,
        systems=args.systems,
        column=tag_column(args.tag_column),
        drop_incomplete=True,  # the table keeps every fold; a fold without OOV is noted below
        alpha=args.alpha,
    )
    text = study.frame.to_csv(index=False)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    if args.baselines is not None:
        study.baselines.table().to_csv(args.baselines, index=False)
    table = study.table
    _note_undefined_oov(study.frame)
    print(
        f"scored {counted(len(table.systems), 'system')} on "
        f"{counted(len(study.manifest), 'fold')} of "
        f"{counted(len(table.datasets), 'corpus', 'corpora')}: {counted(len(study.frame), 'row')}"
        + (f" in {args.output}" if args.output is not None else ""),
        file=sys.stderr,
    )
    return 0


def _note_undefined_oov(frame: Any) -> None:
    """Say on stderr which folds have no OOV word: their oov_accuracy is left empty."""
    from isbetter.core.validate import counted

    folds = frame.loc[frame["oov_tokens"].eq(0), ["dataset", "run", "fold"]].drop_duplicates()
    if len(folds) == 0:
        return
    named = "; ".join(
        f"{r.dataset!r} run {r.run} fold {r.fold}" for r in folds.head(3).itertuples()
    )
    more = f" and {len(folds) - 3} more" if len(folds) > 3 else ""
    print(
        f"isbetter tagging: note: {counted(len(folds), 'fold')} without any OOV word ({named}"
        f"{more}): oov_accuracy is left empty there (0 / 0); isbetter rank leaves such folds "
        "out with --drop-incomplete.",
        file=sys.stderr,
    )


def run(args: argparse.Namespace) -> int:
    """Run the action; return the exit code."""
    return _split(args) if args.tagging_command == "split" else _score(args)
