"""Command line: ``isbetter SUBCOMMAND ...`` (also ``python -m isbetter``).

Thin by design: it parses arguments, reads input with :mod:`isbetter.data`,
calls the public API, renders with :mod:`isbetter.report` and returns an exit
code. Bad input prints one line to stderr and exits with 2; no tracebacks.

Each subcommand is a pair of functions, ``_add_NAME(subparsers)`` that declares
its arguments and ``_run_NAME(args) -> int`` that runs it, registered in
:data:`_COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from isbetter._errors import IsbetterError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.ArgumentDefaultsHelpFormatter(prog, max_help_position=32)


def _add_output_args(p: argparse.ArgumentParser, plot_help: str) -> None:
    """Arguments every subcommand shares: seed, report format and destination, plot."""
    p.add_argument("--seed", type=int, default=None, help="random seed (recorded in the output)")
    p.add_argument("--format", default="text", choices=["text", "markdown", "json"])
    p.add_argument("--output", type=Path, default=None, help="write the report here")
    p.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help=plot_help)


def _lazy_plot(module: str, name: str) -> Callable[[Any, Path], Any]:
    """Return a plot saver that imports matplotlib only when a plot is asked for."""

    def save(result: Any, path: Path) -> Any:
        return getattr(importlib.import_module(module), name)(result, path)

    return save


def _emit(
    args: argparse.Namespace,
    result: Any,
    renderers: Mapping[str, Callable[..., str]],
    save_plot: Callable[[Any, Path], Any],
) -> int:
    """Write the report in the requested format (stdout or --output) and the --plot file."""
    text = renderers[args.format](result)
    text = text if text.endswith("\n") else text + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    if args.plot is not None:
        save_plot(result, args.plot)
    return 0


# --------------------------------------------------------------------------- cv
def _add_cv(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cv",
        help="compare two systems from per-fold cross-validation scores",
        description=(
            "Compare two systems from per-fold scores on one or more data sets. With one "
            "data set, --method auto is the Bayesian correlated t-test; with several, the "
            "hierarchical correlated-t model."
        ),
        formatter_class=_formatter,
    )
    p.add_argument("file", type=Path, help="long-form scores (CSV, TSV or Parquet)")
    p.add_argument("--a", required=True, metavar="SYSTEM", help="system A")
    p.add_argument("--b", required=True, metavar="SYSTEM", help="system B")
    p.add_argument("--metric", default="score", metavar="COL", help="metric column")
    p.add_argument(
        "--lower-is-better", action="store_true", help="the metric is an error or a loss"
    )
    p.add_argument("--rope", type=float, default=0.0, help="ROPE half-width in score units")
    p.add_argument(
        "--method",
        default="auto",
        choices=["auto", "correlated-t", "sign", "signed-rank", "hierarchical"],
        help="model",
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
    p.add_argument(
        "--draws",
        type=int,
        default=None,
        help="posterior draws (per chain for the hierarchical model; default: the method's)",
    )
    p.add_argument("--chains", type=int, default=None, help="MCMC chains (hierarchical)")
    p.add_argument("--tune", type=int, default=None, help="MCMC tuning steps (hierarchical)")
    _add_output_args(p, "write the simplex (or posterior) plot here")
    cols = p.add_argument_group("column names")
    cols.add_argument("--dataset-col", default="dataset", help="data set column ('' for one)")
    cols.add_argument("--system-col", default="system", help="system column")
    cols.add_argument("--run-col", default="run", help="run column ('' for a single run)")
    cols.add_argument("--fold-col", default="fold", help="fold column")
    cols.add_argument(
        "--drop-incomplete",
        action="store_true",
        help="drop missing scores and folds not present for every system",
    )


def _run_cv(args: argparse.Namespace) -> int:
    from isbetter import report
    from isbetter.cv_compare import compare
    from isbetter.data import read_scores

    table = read_scores(
        args.file,
        dataset=args.dataset_col or None,
        system=args.system_col,
        run=args.run_col or None,
        fold=args.fold_col,
        score=args.metric,
        higher_is_better=not args.lower_is_better,
        drop_incomplete=args.drop_incomplete,
    )
    options = {
        name: getattr(args, name)
        for name in ("rho", "prior", "draws", "chains", "tune")
        if getattr(args, name) is not None
    }
    result = compare(
        table,
        system_a=args.a,
        system_b=args.b,
        rope=args.rope,
        method=args.method.replace("-", "_"),
        rng=args.seed,
        **options,
    )
    renderers = {"text": report.to_text, "markdown": report.to_markdown, "json": report.to_json}
    return _emit(args, result, renderers, _lazy_plot("isbetter.plots", "save_comparison_plot"))


# --------------------------------------------------------------------------- f1
def _add_f1(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "f1",
        help="compare two classifiers from per-document predictions on one test set",
        description=(
            "Paired Bayesian comparison of F1 (or another contingency-table measure) of two "
            "classifiers on the same test set (Zhang et al., SIGIR 2016): exact posterior, "
            "HDI + ROPE decision, Savage-Dickey BF01 and frequentist baselines, one row per "
            "class (one class against the rest; one row for a binary task)."
        ),
        formatter_class=_formatter,
    )
    p.add_argument("file", type=Path, help="one row per document (CSV, TSV or Parquet)")
    p.add_argument("--gold", default="gold", metavar="COL", help="gold-label column")
    p.add_argument("--a", default=None, metavar="COL", help="predictions of system A")
    p.add_argument("--b", default=None, metavar="COL", help="predictions of system B")
    p.add_argument(
        "--measure",
        default="f1",
        choices=[
            "f1",
            "fbeta",
            "precision",
            "recall",
            "accuracy",
            "specificity",
            "balanced_accuracy",
            "dcf",
        ],
        help="measure to compare",
    )
    p.add_argument("--beta", type=float, default=1.0, help="beta of --measure fbeta")
    p.add_argument("--cost-fn", type=float, default=1.0, help="DCF cost of a false negative")
    p.add_argument("--cost-fp", type=float, default=1.0, help="DCF cost of a false positive")
    p.add_argument("--p-positive", type=float, default=0.5, help="DCF prior of the positive class")
    p.add_argument(
        "--positive",
        default=None,
        metavar="LABEL",
        help="positive class of a binary task (default: the larger label)",
    )
    p.add_argument("--model", default="paired", choices=["paired", "unpaired"], help="model")
    p.add_argument("--rope", type=float, default=0.05, help="ROPE half-width")
    p.add_argument("--draws", type=int, default=50_000, help="posterior draws per class")
    p.add_argument(
        "--resamples", type=int, default=10_000, help="bootstrap / randomization resamples"
    )
    p.add_argument("--no-baselines", action="store_true", help="skip the frequentist tests")
    _add_output_args(p, "write the posterior and Savage-Dickey plots of the first class here")


def _run_f1(args: argparse.Namespace) -> int:
    from isbetter import report
    from isbetter.f1_compare import compare_f1
    from isbetter.predictions import read_predictions

    systems = [s for s in (args.a, args.b) if s is not None]
    table = read_predictions(args.file, gold=args.gold, systems=systems or None)
    result = compare_f1(
        table,
        system_a=args.a,
        system_b=args.b,
        measure=args.measure,
        beta=args.beta,
        cost_fn=args.cost_fn,
        cost_fp=args.cost_fp,
        p_positive=args.p_positive,
        rope=args.rope,
        model=args.model,
        draws=args.draws,
        positive=args.positive,
        baselines=not args.no_baselines,
        resamples=args.resamples,
        rng=args.seed,
    )
    renderers = {
        "text": report.f1_to_text,
        "markdown": report.f1_to_markdown,
        "json": report.f1_to_json,
    }
    return _emit(args, result, renderers, _lazy_plot("isbetter.plots.f1", "save_f1_plot"))


# ------------------------------------------------------------------------ power
def _add_power(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "power",
        help="power of the paired and unpaired F1 models, by simulation",
        description=(
            "Simulate test sets of each size from a joint distribution of two classifiers' "
            "outcomes and report how often the HDI + ROPE decision reaches the goal "
            "(Zhang et al., SIGIR 2016, section 4.1 and Table 3)."
        ),
        formatter_class=_formatter,
    )
    p.add_argument(
        "--scenario",
        default=None,
        choices=["sigir-a", "sigir-b"],
        help="a generating distribution of the paper (sets --goal too)",
    )
    p.add_argument("--mu", type=float, default=None, help="probability of a positive document")
    p.add_argument(
        "--theta-pos",
        type=float,
        nargs=4,
        default=None,
        metavar="P",
        help="P(outcome | positive) for (A,B) = (1,1) (1,0) (0,1) (0,0)",
    )
    p.add_argument(
        "--theta-neg",
        type=float,
        nargs=4,
        default=None,
        metavar="P",
        help="P(outcome | negative), same order",
    )
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[500, 1000, 1500, 2000, 2500, 3000, 3500],
        help="test-set sizes",
    )
    p.add_argument(
        "--goal",
        default=None,
        choices=[">>", "~", "<<"],
        help="decision to reach (default: >> ; ~ for --scenario sigir-b)",
    )
    p.add_argument("--replicates", type=int, default=1000, help="simulated test sets per size")
    p.add_argument("--draws", type=int, default=5000, help="posterior draws per test set")
    p.add_argument("--rope", type=float, default=0.05, help="ROPE half-width")
    p.add_argument("--measure", default="f1", help="measure (a name, see `isbetter f1 --help`)")
    _add_output_args(p, "write the power curves here")


def _run_power(args: argparse.Namespace) -> int:
    from isbetter import report
    from isbetter._errors import InputError
    from isbetter.power import (
        SIGIR_SCENARIO_A,
        SIGIR_SCENARIO_B,
        JointDistribution,
        power_analysis,
    )

    custom = (args.mu, args.theta_pos, args.theta_neg)
    if args.scenario is not None:
        if any(v is not None for v in custom):
            raise InputError("Give either --scenario or --mu/--theta-pos/--theta-neg, not both.")
        dist = SIGIR_SCENARIO_A if args.scenario == "sigir-a" else SIGIR_SCENARIO_B
        goal = args.goal or (">>" if args.scenario == "sigir-a" else "~")
    else:
        if any(v is None for v in custom):
            raise InputError(
                "Give a generating distribution: --scenario sigir-a|sigir-b, or all of --mu, "
                "--theta-pos (4 numbers) and --theta-neg (4 numbers)."
            )
        dist = JointDistribution(args.mu, tuple(args.theta_pos), tuple(args.theta_neg))
        goal = args.goal or ">>"
    result = power_analysis(
        dist,
        sizes=args.sizes,
        goal=goal,
        replicates=args.replicates,
        draws=args.draws,
        rope=args.rope,
        measure=args.measure,
        rng=args.seed,
    )
    renderers = {
        "text": report.power_to_text,
        "markdown": report.power_to_markdown,
        "json": report.power_to_json,
    }
    return _emit(args, result, renderers, _lazy_plot("isbetter.plots.power", "save_power_plot"))


_COMMANDS: list[tuple[Callable[[argparse._SubParsersAction], None], Callable[..., int]]] = [
    (_add_cv, _run_cv),
    (_add_f1, _run_f1),
    (_add_power, _run_power),
]


def _build_parser() -> argparse.ArgumentParser:
    from isbetter import __version__

    parser = _Parser(
        prog="isbetter",
        description="Is system A really better than system B, or practically the same?",
        formatter_class=_formatter,
    )
    parser.add_argument("--version", action="version", version=f"isbetter {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser
    )
    for add, run in _COMMANDS:
        before = set(sub.choices)
        add(sub)
        for name in set(sub.choices) - before:
            sub.choices[name].set_defaults(_run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors (already printed)
        return int(exc.code or 0)
    try:
        with warnings.catch_warnings():
            # PyTensor's notice that it found no BLAS library concerns how it was installed,
            # not the results; it would otherwise be the first thing every user reads.
            warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
            return int(args._run(args))
    except IsbetterError as exc:
        print(f"isbetter {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"isbetter {args.command}: error: {exc}", file=sys.stderr)
        return 1
