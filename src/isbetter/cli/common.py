"""What every subcommand shares: the parser class, output options, column options, output."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from isbetter.core.vocabulary import FORMATS

__all__ = [
    "Parser",
    "Renamed",
    "add_column_args",
    "add_output_args",
    "add_sampler_args",
    "check_destinations",
    "emit",
    "formatter",
    "lazy_plot",
    "mark_default_rope",
    "rope_note",
    "score_columns",
]


class _Once(argparse._StoreAction):
    """Store an option's value, refusing a second one (argparse would keep the last)."""

    #: the option's later names are old ones: using one prints a note naming the first
    renamed = False

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given: set[str] = getattr(parser, "given", set())
        if self.option_strings and self.dest in given:
            before, now = getattr(namespace, self.dest), values
            raise argparse.ArgumentError(
                self, f"given twice ({_shown(before)}, then {_shown(now)}); give it once"
            )
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)
        current = self.option_strings[0] if self.option_strings else None
        if self.renamed and option_string not in (None, current):
            print(
                f"{parser.prog}: note: {option_string} is an alias of {current}, the current "
                f"name; write {current}.",
                file=sys.stderr,
            )


class Renamed(_Once):
    """An option that also answers to its old name; given by that name, a note names the new.

    Declare the current name first: ``add_argument("--metric", "--measure", action=Renamed)``.
    """

    renamed = True


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(map(str, value)) or "no value"
    return str(value)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit code 2.

    An option that takes one value refuses to be given twice (``--metric a --metric b``
    is an error naming ``--metric``, not a silent ``b``); options meant to be repeated
    say so with ``action="append"``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)
        self.register("action", "store", _Once)
        self.given: set[str] = set()

    def parse_known_args(  # type: ignore[override]
        self, args: Any = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse as argparse does; every parse starts with no option given."""
        self.given = set()
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        """Print the usage error as one line and exit with 2."""
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Formatter(argparse.HelpFormatter):
    """Show an option's default once, and only when it says something (not None/False)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or any(default is v for v in (None, False, argparse.SUPPRESS))  # 0.0 == False
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


def formatter(prog: str) -> argparse.HelpFormatter:
    """Help formatter of every parser: useful defaults shown, options aligned."""
    return _Formatter(prog, max_help_position=32)


def add_output_args(p: argparse.ArgumentParser, plot_help: str) -> None:
    """Arguments every subcommand shares: seed, report format and destination, plot."""
    p.add_argument("--seed", type=int, default=None, help="random seed (recorded in the output)")
    p.add_argument(
        "--format",
        default="text",
        choices=FORMATS,
        help="report format: " + ", ".join(FORMATS) + " (LaTeX: a booktabs table; HTML: a "
        "table fragment; --report writes a whole page)",
    )
    p.add_argument("--output", type=Path, default=None, help="write the report here")
    p.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help=plot_help)
    p.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="FILE.html",
        help="write a self-contained HTML page: tables, plots, settings, diagnostics, signature",
    )


def lazy_plot(module: str, name: str, *args: Any) -> Callable[[Any, Path], Any]:
    """Return a plot saver that imports matplotlib only when a plot is asked for.

    `args` follow the path in the saver's call (e.g. the classes of ``save_f1_plot``).
    """

    def save(result: Any, path: Path) -> Any:
        return getattr(importlib.import_module(module), name)(result, path, *args)

    save.__name__ = name  # the HTML report captions the plot by the saver's name
    return save


def _report_path(path: Path, flag: str) -> None:
    from isbetter.report.html import check_report_path

    check_report_path(path, flag)


def check_destinations(args: argparse.Namespace) -> None:
    """Check every output path before any work starts: writable (a test write), format.

    A destination that cannot be written (a missing, read-only or immutable folder)
    is an error naming its flag now, not an OSError after the fit.
    """
    from isbetter.core.errors import InputError
    from isbetter.core.writable import check_writable_file, check_writable_folder

    checks = {
        "output": check_writable_file,
        "plot": check_writable_file,
        "report": _report_path,  # an .html file that can be written
        "plot_dir": check_writable_folder,
        "cache_dir": check_writable_folder,
    }
    for dest, check in checks.items():
        path = getattr(args, dest, None)
        if path is not None:
            check(path, "--" + dest.replace("_", "-"))
    plot = getattr(args, "plot", None)
    if plot is not None:
        from matplotlib.backend_bases import FigureCanvasBase

        kinds = FigureCanvasBase.get_supported_filetypes()
        suffix = plot.suffix.lower().lstrip(".")
        if suffix not in kinds:
            raise InputError(
                f"--plot {str(plot)!r}: cannot write {suffix or 'a file without an extension'!r}"
                f" plots; use one of: {', '.join(sorted(kinds))}."
            )


def emit(args: argparse.Namespace, result: Any, save_plot: Callable[[Any, Path], Any]) -> int:
    """Write the report in the requested format (stdout or --output) and the --plot file."""
    from isbetter.cli.interrupt import check
    from isbetter.core.writable import replacing, write_text
    from isbetter.report import render

    check()  # Ctrl-C during the work, caught by a sampler: write nothing
    text = render(result, args.format)
    # each file whole or not at all: a failed write (a full disk) keeps the earlier file
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_text(args.output, text, "--output")
    if args.plot is not None:
        with replacing(args.plot, "--plot") as tmp:
            save_plot(result, tmp)  # the temporary file has the plot's extension
        print(f"wrote plot to {args.plot}", file=sys.stderr)
    if getattr(args, "report", None) is not None:
        from isbetter.report.html import html_report

        write_text(args.report, html_report(result, plots=[save_plot]), "--report")
        print(f"wrote report to {args.report}", file=sys.stderr)
    return 0


def add_column_args(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Add the column-name options of score files (``cv`` and ``rank``): long or wide."""
    cols = p.add_argument_group(
        "column names",
        "Long tables: one row per score. Without run and fold columns (or with --fold-col ''): "
        "one score per data set and system, for the sign and signed-rank tests. --wide: one "
        "row per data set and one column per system.",
    )
    cols.add_argument(
        "--dataset-col",
        action="append",
        default=None,
        metavar="COL",
        help="data set column (default: dataset; repeat for a key of several columns, e.g. "
        "function and dimension; '' for one data set, or for unnamed rows of a --wide table)",
    )
    cols.add_argument("--system-col", default="system", help="system column")
    cols.add_argument("--run-col", default="run", help="run column ('' for a single run)")
    cols.add_argument(
        "--fold-col", default="fold", help="fold column ('' for one score per data set and system)"
    )
    cols.add_argument(
        "--wide",
        action="store_true",
        help="one row per data set, one column per system (as autorank takes it); --metric "
        "names the metric of its numbers",
    )
    cols.add_argument(
        "--drop-incomplete",
        action="store_true",
        help="drop missing scores and folds not present for every system",
    )
    return cols


#: the hierarchical model's tuning steps, unless told (cv.hierarchical.model.TUNE and
#: DRAW_VARIANCE_TUNE)
HIERARCHICAL_TUNE_HELP = (
    "hierarchical: 500, 1000 where it samples its centred model of 21-200 data sets"
)


def add_sampler_args(p: argparse.ArgumentParser, draws_help: str, tune_help: str) -> None:
    """Add the posterior draws and the MCMC chains and tuning steps (``cv`` and ``rank``)."""
    p.add_argument("--draws", type=int, default=None, help=draws_help)
    p.add_argument("--chains", type=int, default=None, help="MCMC chains (default 4)")
    p.add_argument(
        "--tune", type=int, default=None, help=f"MCMC tuning steps per chain (default {tune_help})"
    )


def score_columns(args: argparse.Namespace) -> dict[str, Any]:
    """Return the column arguments of :func:`isbetter.read_scores` that the options give."""
    datasets = [c for c in args.dataset_col or ["dataset"] if c]
    return {
        "dataset": (datasets[0] if len(datasets) == 1 else datasets) or None,
        "system": args.system_col,
        "run": args.run_col or None,
        "fold": args.fold_col or None,
        "wide": args.wide,
    }


def rope_note(args: argparse.Namespace, values: Any, default: float, metric: str) -> float:
    """Say on stderr what the ROPE is when --rope was not given; return the ROPE used.

    Without --rope: a note that the ROPE is the default (0: no practical equivalence can
    be concluded) with a suggestion in the metric's units
    (:func:`isbetter.core.rope.suggested_rope`). With one that does not fit the scores'
    scale (:func:`isbetter.core.rope.rope_misfit`): a warning.
    """
    from isbetter.core.rope import rope_misfit, suggested_rope

    name = f"isbetter {args.command}:"
    if args.rope is None:
        point = suggested_rope(values) if values is not None else 0.01
        if default == 0:
            said = "no --rope given, so the ROPE is 0 and no practical equivalence can be concluded"
        else:
            said = f"no --rope given: the ROPE is the default ±{default:g}"
        print(
            f"{name} note: {said}; give --rope in the units of {metric}, e.g. --rope {point:g} "
            "(one point of the scores' scale; see the README, 'How to choose a ROPE').",
            file=sys.stderr,
        )
        return default
    rope = float(args.rope)
    misfit = rope_misfit(rope, values) if values is not None else None
    if misfit:
        print(f"{name} warning: --rope {rope:g}: {misfit}.", file=sys.stderr)
    return rope


def mark_default_rope(args: argparse.Namespace, result: Any) -> Any:
    """Record in the result's settings that its ROPE is the default (no --rope given)."""
    import dataclasses

    if args.rope is not None:
        return result
    return dataclasses.replace(result, settings={**result.settings, "rope_default": True})
