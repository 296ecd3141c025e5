"""Ctrl-C stops a command, even when a library it calls swallows the interrupt.

Samplers catch :class:`KeyboardInterrupt` to hand back what they have drawn so far
(PyMC, nutpie): a hierarchical fit interrupted at the wrong moment would then print a
report of a cut-short chain and exit 0, or fail in the sampler's clean-up with a
traceback. While :func:`watch` is active, an interrupt is also remembered:
:func:`check` raises it again before anything is written, :func:`seen` tells the
command line that a later error is its consequence, and warnings about the cut-short
work are not shown; the command stops with its one-line message and exit code 130.
Once it is stopping (:func:`stopping`), further presses change nothing, and the
program ends at once (:func:`exiting`).

SIGTERM (``kill``, a job scheduler, a container being stopped) is handled as Ctrl-C:
the same clean stop — workers killed, finished pairs kept — with exit code 143
(:func:`exit_code`, 128 + the signal's number, as a shell reports a command that
SIGTERM ended; 130 would tell a supervisor that someone pressed Ctrl-C).
"""

from __future__ import annotations

import gc
import signal
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["EXIT_CODES", "check", "exit_code", "exiting", "reason", "seen", "stopping", "watch"]

_SEEN = threading.Event()
_STOPPING = threading.Event()
_SIGNALS: list[int] = []  # the first signal that stopped the command

#: the exit codes of a command stopped by Ctrl-C (SIGINT) or SIGTERM
EXIT_CODES = (128 + signal.SIGINT, 128 + signal.SIGTERM)


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    if _STOPPING.is_set():  # the command is already stopping: once is enough
        return
    if not _SIGNALS:
        _SIGNALS.append(signum)
    _SEEN.set()
    raise KeyboardInterrupt


@contextmanager
def watch() -> Iterator[None]:
    """Remember every Ctrl-C and SIGTERM while the block runs (main thread, default handlers)."""
    _SEEN.clear()
    _STOPPING.clear()
    _SIGNALS.clear()
    main = threading.current_thread() is threading.main_thread()
    installed = main and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if installed:
        signal.signal(signal.SIGINT, _on_interrupt)
    terminate = main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if terminate:
        signal.signal(signal.SIGTERM, _on_interrupt)
    show = warnings.showwarning

    def quiet_once_interrupted(*args: Any, **kwargs: Any) -> None:
        if not _SEEN.is_set():
            show(*args, **kwargs)

    warnings.showwarning = quiet_once_interrupted
    try:
        yield
    finally:
        warnings.showwarning = show
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if terminate:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def seen() -> bool:
    """Whether Ctrl-C was pressed (or SIGTERM received) since :func:`watch` began."""
    return _SEEN.is_set()


def exit_code() -> int:
    """Return the exit code of the stopped command: 143 after SIGTERM, else 130 (Ctrl-C)."""
    return 128 + (_SIGNALS[0] if _SIGNALS else signal.SIGINT)


def reason() -> str:
    """Return the word for how the command was stopped: "interrupted" or "terminated"."""
    return "terminated" if _SIGNALS[:1] == [signal.SIGTERM] else "interrupted"


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if Ctrl-C was pressed, even if it was caught since."""
    if _SEEN.is_set():
        raise KeyboardInterrupt


def stopping() -> None:
    """Mark the command as stopping after a Ctrl-C: further presses change nothing."""
    _STOPPING.set()


def exiting() -> None:
    """End this process quickly and quietly after a Ctrl-C (the program, not :func:`main`).

    A further Ctrl-C or SIGTERM is ignored: it would interrupt the interpreter's clean-up (joining
    the worker pool's thread) with a traceback. The final garbage collection of every
    object is skipped (:func:`gc.freeze`): with PyMC models or a Dask client in memory
    it took seconds. And CPython's mark of an unhandled KeyboardInterrupt is cleared:
    CPython (3.11 at least) sets it when the interrupt leaves code run by ``exec`` of a
    string — dataclasses are made that way, on import — even if it is caught later,
    and ``python -m`` then ends by killing itself with SIGINT instead of exiting with
    130; the next ``exec`` of a string clears it.
    """
    for signum in (signal.SIGINT, signal.SIGTERM):
        while signal.getsignal(signum) is not signal.SIG_IGN:
            try:
                signal.signal(signum, signal.SIG_IGN)
            except KeyboardInterrupt:  # pressed again just now, before it could be ignored
                continue
            except ValueError:  # not the main thread: nothing to ignore from here
                break
    gc.freeze()
    exec("")
