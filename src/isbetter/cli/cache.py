"""``isbetter cache info|clear``: see and empty isbetter's cache of compiled code.

The hierarchical model is compiled (numba) on its first use on a machine and kept
in the platform's user cache directory, or in $ISBETTER_CACHE_DIR when set;
later calls load it in a fraction of a second. Clearing it is always safe: the
next fit compiles again. A cache that cannot be used (read-only and incomplete, a
full disk, damaged) is bypassed with a warning naming it: the code is compiled in
memory.
"""

from __future__ import annotations

import argparse

from isbetter.cli.common import formatter


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "cache",
        help="show or empty the cache of compiled models",
        description=" ".join(__doc__.split("\n\n")[1].split()),
        formatter_class=formatter,
    )
    p.add_argument(
        "action",
        choices=("info", "clear"),
        help="info: where the cache is and what it holds; clear: delete it",
    )


def run(args: argparse.Namespace) -> int:
    """Print the cache's state, or clear it and say what was removed."""
    from isbetter.core import cache
    from isbetter.core.validate import counted

    if args.action == "info":
        print(cache.info())
        return 0
    removed = cache.clear()
    print(
        f"cleared {removed.path}: {counted(removed.n_files, 'file')}, "
        f"{removed.size_bytes / 1e6:.1f} MB"
        " (the next hierarchical fit compiles again)"
    )
    return 0
