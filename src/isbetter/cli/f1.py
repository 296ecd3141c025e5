"""``isbetter f1``: compare two classifiers from per-document predictions."""

from __future__ import annotations

import argparse
from pathlib import Path

from isbetter.cli.common import (
    Renamed,
    add_output_args,
    emit,
    formatter,
    lazy_plot,
    mark_default_rope,
    rope_note,
)
from isbetter.core.vocabulary import F1_MODELS


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "f1",
        help="compare two classifiers from per-document predictions on one test set",
        description=(
            "Paired Bayesian comparison of F1 (or another contingency-table measure) of two "
            "classifiers on the same test set (Zhang et al., SIGIR 2016): exact posterior, "
            "HDI + ROPE decision, Bayes factors (ROPE; Savage-Dickey BF01 with its kernel "
            "bandwidth) and frequentist baselines, one row per "
            "class (one class against the rest; one row for a binary task)."
        ),
        formatter_class=formatter,
    )
    p.add_argument("file", type=Path, help="one row per document (CSV, TSV, Parquet or JSON lines)")
    p.add_argument("--gold", default="gold", metavar="COL", help="gold-label column")
    p.add_argument("--a", default=None, metavar="COL", help="predictions of system A")
    p.add_argument("--b", default=None, metavar="COL", help="predictions of system B")
    _add_measure_args(p)
    _add_model_args(p)
    p.add_argument(
        "--class",
        dest="classes",
        action="append",
        default=None,
        metavar="NAME",
        help="what --plot and --report draw: a class, macro or micro (repeat for several; "
        "all: every row; default: the first row)",
    )
    add_output_args(p, "write the posterior and Savage-Dickey plots of the --class rows here")


def _add_measure_args(p: argparse.ArgumentParser) -> None:
    """Declare --metric and its parameters (given to compare_f1 as a measure object)."""
    from isbetter.f1.measures import MEASURE_NAMES

    p.add_argument(
        "--metric",
        "--measure",
        action=Renamed,
        default="f1",
        choices=MEASURE_NAMES,
        help="measure of the contingency table to compare, as rank --gold --metric (--measure: "
        "its old name)",
    )
    p.add_argument("--beta", type=float, default=1.0, help="beta of --metric fbeta")
    p.add_argument("--cost-fn", type=float, default=1.0, help="DCF cost of a false negative")
    p.add_argument("--cost-fp", type=float, default=1.0, help="DCF cost of a false positive")
    p.add_argument("--p-positive", type=float, default=0.5, help="DCF prior of the positive class")


def _add_model_args(p: argparse.ArgumentParser) -> None:
    """Declare the class, the model and its sampling, the baselines."""
    p.add_argument(
        "--positive",
        default=None,
        metavar="LABEL",
        help="positive class of a binary task (default: the larger label)",
    )
    p.add_argument(
        "--model",
        default="paired",
        choices=F1_MODELS,
        help="paired or unpaired model of Zhang et al. (SIGIR 2016), or their hierarchical "
        "model of the confusion matrices (ICDM 2015, MCMC)",
    )
    p.add_argument(
        "--rope",
        type=float,
        default=None,
        help="ROPE half-width in the measure's units (default 0.05; a note says so)",
    )
    p.add_argument("--draws", type=int, default=50_000, help="posterior draws per class")
    p.add_argument(
        "--resamples", type=int, default=10_000, help="bootstrap / randomization resamples"
    )
    p.add_argument("--no-baselines", action="store_true", help="skip the frequentist tests")
    p.add_argument(
        "--tune", type=int, default=1000, help="MCMC tuning steps (--model hierarchical)"
    )
    p.add_argument("--chains", type=int, default=4, help="MCMC chains (--model hierarchical)")


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code."""
    from isbetter.core.errors import InputError
    from isbetter.f1.baselines import Baselines
    from isbetter.f1.compare import DEFAULT_ROPE, compare_f1
    from isbetter.f1.measures import get_measure, measure_scale
    from isbetter.f1.predictions import read_predictions
    from isbetter.inference.sampling import Sampling

    systems = [s for s in (args.a, args.b) if s is not None]
    if len(systems) == 1:  # not "the table has 1 system": the other column was not asked for
        given, missing = ("--a", "--b") if args.a is not None else ("--b", "--a")
        raise InputError(
            f"{given} {systems[0]} is given without {missing}; give the prediction columns of "
            "both systems, --a and --b."
        )
    table = read_predictions(args.file, gold=args.gold, systems=systems or None)
    if args.classes:  # before the work starts; the rows of the result are checked again below
        _check_classes(args, [str(c) for c in table.labels] + ["macro", "micro"])
    positive = None
    if args.positive is not None:
        if not table.is_binary:
            raise InputError(
                "--positive is for binary tasks; a multi-class one compares every class."
            )
        positive = table.check_label(args.positive, "positive")
    measure = get_measure(
        args.metric,
        beta=args.beta,
        cost_fn=args.cost_fn,
        cost_fp=args.cost_fp,
        p_positive=args.p_positive,
    )
    rope = DEFAULT_ROPE if args.rope is None else args.rope
    result = compare_f1(
        table,
        system_a=args.a,
        system_b=args.b,
        metric=measure,
        model=args.model,
        rope=rope,
        draws=args.draws,
        sampling=Sampling(tune=args.tune, chains=args.chains),
        classes=positive,
        baselines=not args.no_baselines and Baselines(resamples=args.resamples),
        rng=args.seed,
    )
    scale = {args.metric: measure_scale(measure)}
    rope_note(args, {args.metric: rope}, scale, () if args.rope is not None else scale)
    result = mark_default_rope(args, result)
    classes = None
    if args.classes:
        _check_classes(args, list(result.classes))
        classes = list(result.classes) if "all" in args.classes else args.classes
    return emit(args, result, lazy_plot("isbetter.plots.f1", "save_f1_plot", classes))


def _check_classes(args: argparse.Namespace, rows: list[str]) -> None:
    """--class names rows that exist, and something to draw them in."""
    from isbetter.core.errors import InputError

    if args.plot is None and getattr(args, "report", None) is None:
        raise InputError("--class chooses what is plotted; give --plot FILE or --report FILE.")
    for name in args.classes:
        if name != "all" and name not in rows:
            raise InputError(
                f"--class {name!r}: no such row; choose from {', '.join(rows)}, or all."
            )
