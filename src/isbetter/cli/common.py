"""What every subcommand shares: the parser class, output options, column options, output."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from isbetter.core.vocabulary import FORMAT_SUFFIXES, FORMATS

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
    "report_format",
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
        default=None,
        choices=FORMATS,
        help="report format: " + ", ".join(FORMATS) + " (LaTeX: a booktabs table; HTML: a "
        "table fragment; --report writes a whole page; default: that of --output's "
        "extension, else text)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        help="write the report here, in the format of its extension: "
        + ", ".join(f"{s[0]} {f}" for f, s in FORMAT_SUFFIXES.items()),
    )
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


def report_format(given: str | None, output: Path | None) -> str:
    """Return the report's format: `given` (--format), else that of --output's extension.

    Raises an :class:`~isbetter.core.errors.InputError` (before any work) when --output
    names one format and --format another, or when the format cannot be told: no
    --format and an extension that is not a report format's.

    Examples
    --------
    >>> report_format(None, Path("ranking.json")), report_format(None, None)
    ('json', 'text')
    >>> report_format("csv", Path("scores.out"))
    'csv'
    """
    from isbetter.core.errors import InputError

    if output is None:
        return given or "text"
    suffix = output.suffix.lower()
    named = next((f for f, ends in FORMAT_SUFFIXES.items() if suffix in ends), None)
    if named is None and given is None:
        endings = ", ".join(f"{ends[0]} ({f})" for f, ends in FORMAT_SUFFIXES.items())
        raise InputError(
            f"--output {str(output)!r}: cannot tell the report format from "
            f"{repr(suffix) if suffix else 'a name without an extension'}; end the name in "
            f"{endings}, or give --format."
        )
    if named is not None and given is not None and named != given:
        raise InputError(
            f"--output {str(output)!r} names a {named} file, but --format is {given}; give "
            f"--format {named}, or a name ending in {FORMAT_SUFFIXES[given][0]}."
        )
    return given or named or "text"


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
    if hasattr(args, "format"):  # the report's format first: it needs no test write
        report_format(args.format, getattr(args, "output", None))
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
    text = render(result, report_format(args.format, args.output))
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
    cols.add_argument(
        "--system-col", default="system", help="system column (also of item tables, --items)"
    )
    cols.add_argument(
        "--run-col", default="run", help="run column ('' for a single run; also --items)"
    )
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


def add_sampler_args(
    p: argparse.ArgumentParser, draws_help: str, tune_help: str, chains_help: str
) -> None:
    """Add the posterior draws and the MCMC chains and tuning steps (``cv`` and ``rank``)."""
    p.add_argument("--draws", type=int, default=None, help=draws_help)
    p.add_argument("--chains", type=int, default=None, help=f"MCMC chains (default {chains_help})")
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


def rope_note(
    args: argparse.Namespace,
    ropes: Mapping[str, float],
    values: Mapping[str, Any],
    defaulted: Collection[str] = (),
) -> None:
    """Say on stderr which ROPEs are defaults (no --rope), and warn of one that does not fit.

    `ropes` are the ROPEs used, per metric; `values` each metric's scores, or its
    measure's range (None: not judged); `defaulted` the metrics given no --rope.
    For those, one note: a ROPE of 0 concludes no practical equivalence, another
    default is named; with a suggestion in the metric's units
    (:func:`isbetter.core.rope.suggested_rope`). For every other, a warning when it
    does not fit the scores' scale (:func:`isbetter.core.rope.rope_misfit`).
    """
    from isbetter.core.rope import rope_misfit

    name = f"isbetter {args.command}:"
    default = [m for m in ropes if m in defaulted]
    if default:
        print(f"{name} note: {_default_note(ropes, values, default)}.", file=sys.stderr)
    for m, rope in ropes.items():
        misfit = None if m in default or values.get(m) is None else rope_misfit(rope, values[m])
        if misfit:
            flag = f"--rope {rope:g}" if len(ropes) == 1 else f"--rope {m}={rope:g}"
            print(f"{name} warning: {flag}: {misfit}.", file=sys.stderr)


def _default_note(ropes: Mapping[str, float], values: Mapping[str, Any], default: list[str]) -> str:
    """Return the note on the `default` metrics' ROPEs (:func:`rope_note`)."""
    from isbetter.core.rope import suggested_rope

    some = len(default) < len(ropes)
    given = "no --rope given" + (f" for {', '.join(default)}" if some else "")
    units = default[0] if len(default) == 1 else "each metric"
    guide = "see 'How to choose a ROPE', docs/guide/rope.md"
    value = ropes[default[0]]
    if value:
        return (
            f"{given}: using the default ROPE ±{value:g} in the units of {units} (differences "
            f"within it count as practically equivalent); give --rope for your application "
            f"({guide})"
        )
    points = {m: suggested_rope(values[m]) if values.get(m) is not None else 0.01 for m in default}
    if len(ropes) == 1:
        example = f"--rope {points[default[0]]:g}"
    else:
        example = " ".join(f"--rope {m}={p:g}" for m, p in points.items())
    scale = "the scores' scale" if len(default) == 1 else "each metric's scale"
    return (
        f"{given}, so {'its' if some else 'the'} ROPE is 0 and no practical equivalence can be "
        f"concluded; give --rope in the units of {units}, e.g. {example} (one point of {scale}; "
        f"{guide})"
    )


def mark_default_rope(
    args: argparse.Namespace, result: Any, defaulted: Collection[str] | None = None
) -> Any:
    """Record in the result's settings whether its ROPE is the default (no --rope given).

    ``rope_default`` is true or false; for a ranking whose `defaulted` metrics (given
    no --rope) are some but not all of its ``metrics``, the list of them.
    """
    import dataclasses

    default: bool | list[str] = args.rope is None
    if defaulted is not None and not default:
        some = [m for m in result.metrics if m in defaulted or m.split(" ")[0] in defaulted]
        default = some if some and len(some) < len(result.metrics) else bool(some)
    return dataclasses.replace(result, settings={**result.settings, "rope_default": default})
