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
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from isbetter._errors import IsbetterError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.ArgumentDefaultsHelpFormatter(prog, max_help_position=32)


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


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
    p.add_argument("--seed", type=int, default=None, help="random seed (recorded in the output)")
    p.add_argument(
        "--rho", type=float, default=None, help="correlation of folds (default: 1/folds)"
    )
    p.add_argument(
        "--prior", type=float, default=None,
        help="prior strength of the sign (default 1) and signed-rank (default 0.5) tests",
    )
    p.add_argument("--format", default="text", choices=["text", "markdown", "json"])
    p.add_argument("--output", type=Path, default=None, help="write the report here")
    p.add_argument("--plot", type=Path, default=None, metavar="FILE.png",
                   help="write the simplex (or posterior) plot here")
    cols = p.add_argument_group("column names")
    cols.add_argument("--dataset-col", default="dataset", help="data set column ('' for one)")
    cols.add_argument("--system-col", default="system", help="system column")
    cols.add_argument("--run-col", default="run", help="run column ('' for a single run)")
    cols.add_argument("--fold-col", default="fold", help="fold column")
    cols.add_argument("--drop-incomplete", action="store_true",
                      help="drop missing scores and folds not present for every system")


def _run_cv(args: argparse.Namespace) -> int:
    from isbetter import report
    from isbetter.compare import compare
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
    options = {}
    if args.rho is not None:
        options["rho"] = args.rho
    if args.prior is not None:
        options["prior"] = args.prior
    result = compare(
        table,
        system_a=args.a,
        system_b=args.b,
        rope=args.rope,
        method=args.method.replace("-", "_"),
        rng=args.seed,
        **options,
    )
    render = {"text": report.to_text, "markdown": report.to_markdown, "json": report.to_json}
    _write(render[args.format](result), args.output)
    if args.plot is not None:
        from isbetter.plots import save_comparison_plot

        save_comparison_plot(result, args.plot)
    return 0


_COMMANDS: list[tuple[Callable[[argparse._SubParsersAction], None], Callable[..., int]]] = [
    (_add_cv, _run_cv),
]


def _build_parser() -> argparse.ArgumentParser:
    from isbetter import __version__

    parser = _Parser(
        prog="isbetter",
        description="Is system A really better than system B, or practically the same?",
        formatter_class=_formatter,
    )
    parser.add_argument("--version", action="version", version=f"isbetter {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
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
        return int(args._run(args))
    except IsbetterError as exc:
        print(f"isbetter {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"isbetter {args.command}: error: {exc}", file=sys.stderr)
        return 1
