"""Command line: ``isbetter SUBCOMMAND ...`` (also ``python -m isbetter``).

Thin by design: it parses arguments, reads input with :mod:`isbetter.cv.scores`,
calls the public API, renders with :mod:`isbetter.report` and returns an exit
code. Bad input prints one line to stderr and exits with 2; no tracebacks.
:func:`program` is the program itself: :func:`main`, then the exit; the ``isbetter``
script and ``python -m isbetter`` run it through ``isbetter.__main__.program``, which
keeps a Ctrl-C during this package's imports to one line.

Each subcommand is a module of this package with two functions, ``add(subparsers)``
that declares its arguments and ``run(args) -> int`` that runs it, registered in
:func:`_build_parser`; :mod:`isbetter.cli.common` holds what they share.
"""

from __future__ import annotations

import argparse
import gc
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from isbetter.cli import interrupt

# only what the first line of main() needs: the subcommands, and what they import
# (numpy, for one), are imported inside it, where a Ctrl-C is already caught
from isbetter.core.errors import IsbetterError, RopeWarning

__all__ = ["main", "program"]

#: the collector's first threshold in the program's process (Python's: 700 allocations).
#: A ranking's imports and fits create millions of objects, most of them kept to the
#: end: with Python's thresholds the collector went through all of them five times
#: (0.45 s of a UCI ranking's 10 s in collections, holding the GIL); with this, in
#: none of the full passes (0.17 s in collections). Garbage is still collected.
GC_THRESHOLD = 10_000


def _build_parser() -> argparse.ArgumentParser:
    from isbetter import __version__
    from isbetter.cli import cache, cv, demo, f1, items, power, rank, tagging
    from isbetter.cli.common import Parser, formatter

    parser = Parser(
        prog="isbetter",
        description="Is system A really better than system B, or practically the same?",
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"isbetter {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    for command in (cv, f1, items, power, rank, tagging, demo, cache):
        before = set(sub.choices)
        command.add(sub)
        for name in set(sub.choices) - before:
            sub.choices[name].set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input, 130/143 stopped).

    A command stopped by Ctrl-C exits with 130, by SIGTERM with 143.
    """
    args = argparse.Namespace(command=None)
    with interrupt.watch():  # first of all: a Ctrl-C from here on is one line and 130
        try:
            try:
                args = _build_parser().parse_args(argv)
            except SystemExit as exc:  # --help, --version and usage errors (already printed)
                interrupt.check()  # unless a Ctrl-C came first
                return int(exc.code or 0)
            return _run(args)
        except Exception as exc:
            if not interrupt.seen() and not isinstance(exc, IsbetterError | OSError):
                raise
            return _failure(exc, args)
        except KeyboardInterrupt as exc:
            return _failure(exc, args)


def program() -> NoReturn:
    """Run the ``isbetter`` program (script, ``python -m isbetter``); exit with main's code."""
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    code = main()
    if code in interrupt.EXIT_CODES:
        interrupt.exiting()  # at once, and a second Ctrl-C cannot print a traceback
    else:
        # the interpreter's last collection of every object in memory (the samplers'
        # draws, ArviZ's and NumPy's objects) took 0.5 s after a ranking: not needed
        # by a process that ends now
        gc.freeze()
    sys.exit(code)


def _run(args: argparse.Namespace) -> int:
    from isbetter.cli.common import check_destinations

    with warnings.catch_warnings():  # restores showwarning too: library users keep Python's
        warnings.showwarning = _show_warning(args)
        # PyTensor's notice that it found no BLAS library concerns how it was installed,
        # not the results; it would otherwise be the first thing every user reads.
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        # a ROPE that does not fit the scores: the subcommand's own line names --rope
        warnings.filterwarnings("ignore", category=RopeWarning)
        check_destinations(args)
        code = int(args._run(args))
        interrupt.check()  # a sampler may have caught the Ctrl-C: still stop with 130
        return code


def _show_warning(args: argparse.Namespace) -> Callable[..., None]:
    """Return a ``warnings.showwarning`` that prints each warning as one line, as errors are.

    ``isbetter cv: warning: <message>``: the package's own warnings (convergence, a ROPE,
    the cache) in the command line's words (flags, not Python arguments,
    :func:`~isbetter.cli.messages.cli_message`); another library's with its category.
    Never Python's ``file:line: Category: message`` and the source line. Nothing once the
    command is stopping after a Ctrl-C (the samplers' warnings about their cut-short work).
    """
    from isbetter.cli.messages import cli_message

    name = f"isbetter {args.command}"

    def show(message: Any, category: type[Warning], *rest: Any, **kwargs: Any) -> None:
        if interrupt.seen():
            return
        text = " ".join(str(message).split())
        if category.__module__.partition(".")[0] == "isbetter":
            text = cli_message(text, args)
        else:
            text = f"{category.__name__}: {text}"
        print(f"{name}: warning: {text}", file=sys.stderr)

    return show


def _failure(exc: BaseException, args: argparse.Namespace) -> int:
    """Print the one line that says why the command stopped; return its exit code."""
    name = f"isbetter {args.command}" if args.command else "isbetter"
    if isinstance(exc, KeyboardInterrupt) or interrupt.seen():
        # after a Ctrl-C a sampler's clean-up may fail in its own way: still an interrupt
        interrupt.stopping()
        from isbetter.cli.messages import stopped_message

        print(f"{name}: {stopped_message(args, interrupt.reason())}", file=sys.stderr)
        return interrupt.exit_code()
    if isinstance(exc, IsbetterError):
        from isbetter.cli.messages import cli_message

        print(f"{name}: error: {cli_message(str(exc), args)}", file=sys.stderr)
        return 2
    print(f"{name}: error: {exc}", file=sys.stderr)  # OSError
    return 1
