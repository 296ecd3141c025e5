"""Progress on stderr for long computations: a bar when the work is countable, a clock when not.

Shown when asked (``progress=True``) or, by default (``progress=None``), only when
stderr is a terminal: redirected output, logs and tests stay clean. ``tqdm`` draws
both, as in :mod:`isbetter.ranking.execution`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["activity", "progress_bar", "shows_progress"]


class _NoBar:
    """A silent stand-in for a tqdm bar."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def shows_progress(progress: bool | None) -> bool:
    """Return whether to show progress: as asked, else when stderr is a terminal."""
    if progress is not None:
        return bool(progress)
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress_bar(
    total: int, progress: bool | None, *, desc: str, unit: str, leave: bool = False
) -> Any:
    """Return a tqdm bar of `total` steps on stderr, or a silent stand-in (see module doc).

    `leave` keeps the finished bar on the screen (a ranking's count of pairs).
    """
    if not shows_progress(progress):
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=leave)


@contextmanager
def activity(desc: str, progress: bool | None, *, interval: float = 0.5) -> Iterator[None]:
    """Show `desc` and the elapsed time on stderr while the block runs (work not countable).

    For a computation that reports no steps (compiling and sampling an MCMC model),
    a clock that keeps moving says it is alive; the line is removed at the end.
    """
    if not shows_progress(progress):
        yield
        return
    from tqdm import tqdm

    bar = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", file=sys.stderr, leave=False)
    done = threading.Event()

    def tick() -> None:
        while not done.wait(interval):
            bar.refresh()

    clock = threading.Thread(target=tick, daemon=True)
    clock.start()
    try:
        yield
    finally:
        done.set()
        clock.join()
        bar.close()
