"""Command line: ``isbetter SUBCOMMAND ...`` (also ``python -m isbetter``).

Thin by design: it parses arguments, reads input with :mod:`isbetter.cv.scores`,
calls the public API, renders with :mod:`isbetter.report` and returns an exit
code. Bad input prints one line to stderr and exits with 2; no tracebacks.

Each subcommand is a module of this package with two functions, ``add(subparsers)``
that declares its arguments and ``run(args) -> int`` that runs it, registered in
:data:`_COMMANDS`; :mod:`isbetter.cli.common` holds what they share.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from isbetter.cli import cache, cv, demo, f1, interrupt, power, rank
from isbetter.cli.common import Parser, check_destinations, formatter
from isbetter.cli.messages import cli_message
from isbetter.core.errors import IsbetterError

__all__ = ["main"]


_COMMANDS = (cv, f1, power, rank, demo, cache)


def _build_parser() -> argparse.ArgumentParser:
    from isbetter import __version__

    parser = Parser(
        prog="isbetter",
        description="Is system A really better than system B, or practically the same?",
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"isbetter {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    for command in _COMMANDS:
        before = set(sub.choices)
        command.add(sub)
        for name in set(sub.choices) - before:
            sub.choices[name].set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failure, 2 bad input)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors (already printed)
        return int(exc.code or 0)
    try:
        with warnings.catch_warnings(), interrupt.watch():
            # PyTensor's notice that it found no BLAS library concerns how it was installed,
            # not the results; it would otherwise be the first thing every user reads.
            warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
            check_destinations(args)
            code = int(args._run(args))
            interrupt.check()  # a sampler may have caught the Ctrl-C: still stop with 130
            return code
    except Exception as exc:
        if not interrupt.seen() and not isinstance(exc, IsbetterError | OSError):
            raise
        return _failure(exc, args)
    except KeyboardInterrupt as exc:
        return _failure(exc, args)


def _failure(exc: BaseException, args: argparse.Namespace) -> int:
    """Print the one line that says why the command stopped; return its exit code."""
    if isinstance(exc, KeyboardInterrupt) or interrupt.seen():
        # after a Ctrl-C a sampler's clean-up may fail in its own way: still an interrupt
        print(f"isbetter {args.command}: interrupted", file=sys.stderr)
        return 130
    if isinstance(exc, IsbetterError):
        print(f"isbetter {args.command}: error: {cli_message(str(exc), args)}", file=sys.stderr)
        return 2
    print(f"isbetter {args.command}: error: {exc}", file=sys.stderr)  # OSError
    return 1
