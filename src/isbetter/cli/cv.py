"""``isbetter cv``: compare two systems from per-fold cross-validation scores."""

from __future__ import annotations

import argparse
from pathlib import Path

from isbetter.cli.common import (
    HIERARCHICAL_TUNE_HELP,
    add_column_args,
    add_output_args,
    add_sampler_args,
    emit,
    formatter,
    lazy_plot,
    mark_default_rope,
    rope_note,
    score_columns,
)
from isbetter.core.vocabulary import CV_METHODS


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "cv",
        help="compare two systems from per-fold cross-validation scores",
        description=(
            "Compare two systems from per-fold scores on one or more data sets, or from one "
            "score per data set. --method auto is the Bayesian correlated t-test for the "
            "folds of one data set, the hierarchical correlated-t model for several, and the "
            "Bayesian signed-rank test for one score per data set and system."
        ),
        formatter_class=formatter,
    )
    p.add_argument(
        "file", type=Path, help="scores, long or --wide (CSV, TSV, Parquet or JSON lines)"
    )
    p.add_argument("--a", required=True, metavar="SYSTEM", help="system A")
    p.add_argument("--b", required=True, metavar="SYSTEM", help="system B")
    p.add_argument("--metric", default="score", metavar="COL", help="metric column")
    p.add_argument(
        "--lower-is-better", action="store_true", help="the metric is an error or a loss"
    )
    p.add_argument(
        "--rope",
        type=float,
        default=None,
        help="ROPE half-width in score units (default 0: no practical equivalence can be "
        "concluded; a note says so and suggests one)",
    )
    _add_model_args(p)
    add_sampler_args(
        p,
        "posterior draws (per chain for the hierarchical model; default: the method's)",
        HIERARCHICAL_TUNE_HELP,
        "4, for the hierarchical model; the other methods sample no chains",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no progress clock during the hierarchical fit"
    )
    add_output_args(p, "write the simplex (or posterior) plot here")
    cols = add_column_args(p)
    cols.add_argument(
        "--dataset-name-col",
        default=None,
        metavar="COL",
        help="column of data set names shown in the report and plot (--dataset-col stays "
        "the key, so names may repeat)",
    )


def _add_model_args(p: argparse.ArgumentParser) -> None:
    """Declare the choice of model and its options: --method, --dataset, --rho, --prior."""
    p.add_argument(
        "--method",
        default="auto",
        choices=[m.replace("_", "-") for m in CV_METHODS],
        help="model",
    )
    p.add_argument(
        "--dataset",
        default=None,
        metavar="NAME",
        help="compare on this one data set only (the correlated t-test)",
    )
    p.add_argument(
        "--rho", type=float, default=None, help="correlation of folds (default: 1/folds)"
    )
    p.add_argument(
        "--prior",
        type=float,
        default=None,
        help="prior strength of the sign (default 1) and signed-rank (default 0.5) tests",
    )


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code."""
    from isbetter.core.errors import InputError
    from isbetter.core.progress import activity
    from isbetter.cv.compare import choose_method, compare
    from isbetter.cv.scores import read_scores

    if args.a == args.b:
        raise InputError(f"--a and --b are both {args.a!r}; compare two different systems.")
    table = read_scores(
        args.file,
        **score_columns(args),
        score=args.metric,
        higher_is_better=not args.lower_is_better,
        drop_incomplete=args.drop_incomplete,
        systems=[args.a, args.b],  # another system's missing folds do not concern this pair
        dataset_name=args.dataset_name_col,
    )
    rope = 0.0 if args.rope is None else args.rope
    options = {
        name: getattr(args, name)
        for name in ("rho", "prior", "draws", "chains", "tune")
        if getattr(args, name) is not None
    }
    method = args.method.replace("-", "_")
    if args.dataset is not None:
        if table.per_dataset:
            raise InputError(
                f"--dataset {args.dataset}: one data set is compared by the correlated t-test on "
                "its per-fold scores, and these scores are one per data set and system; compare "
                "across the data sets with --method signed-rank or sign (leave --dataset out)."
            )
        options["dataset"] = args.dataset
        method = "correlated_t" if method == "auto" else method
    method = choose_method(method, len(table.datasets), table.per_dataset)
    hierarchical = method == "hierarchical"
    what = f"hierarchical model of {len(table.datasets)} data sets: compiling and sampling"
    with activity(what, False if args.quiet or not hierarchical else None):
        result = compare(
            table,
            system_a=args.a,
            system_b=args.b,
            rope=rope,
            method=method,
            rng=args.seed,
            **options,
        )
    # after the fit: a command refused for bad input (or stopped) prints one line only
    from isbetter.cli.interrupt import check

    check()
    scores = {args.metric: table.data[args.metric].to_numpy(dtype=float)}
    rope_note(args, {args.metric: rope}, scores, () if args.rope is not None else scores)
    result = mark_default_rope(args, result)
    return emit(args, result, lazy_plot("isbetter.plots", "save_comparison_plot"))
