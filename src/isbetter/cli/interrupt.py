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

__all__ = ["check", "exiting", "seen", "stopping", "watch"]

_SEEN = threading.Event()
_STOPPING = threading.Event()


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    if _STOPPING.is_set():  # the command is already stopping: once is enough
        return
    _SEEN.set()
    raise KeyboardInterrupt


@contextmanager
def watch() -> Iterator[None]:
    """Remember every Ctrl-C while the block runs (main thread, default handler only)."""
    _SEEN.clear()
    _STOPPING.clear()
    installed = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if installed:
        signal.signal(signal.SIGINT, _on_interrupt)
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


def seen() -> bool:
    """Whether Ctrl-C was pressed since :func:`watch` began."""
    return _SEEN.is_set()


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if Ctrl-C was pressed, even if it was caught since."""
    if _SEEN.is_set():
        raise KeyboardInterrupt


def stopping() -> None:
    """Mark the command as stopping after a Ctrl-C: further presses change nothing."""
    _STOPPING.set()


def exiting() -> None:
    """End this process quickly and quietly after a Ctrl-C (the program, not :func:`main`).

    A further Ctrl-C is ignored: it would interrupt the interpreter's clean-up (joining
    the worker pool's thread) with a traceback. The final garbage collection of every
    object is skipped (:func:`gc.freeze`): with PyMC models or a Dask client in memory
    it took seconds. And CPython's mark of an unhandled KeyboardInterrupt is cleared:
    CPython (3.11 at least) sets it when the interrupt leaves code run by ``exec`` of a
    string — dataclasses are made that way, on import — even if it is caught later,
    and ``python -m`` then ends by killing itself with SIGINT instead of exiting with
    130; the next ``exec`` of a string clears it.
    """
    while signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except KeyboardInterrupt:  # pressed again just now, before it could be ignored
            continue
        except ValueError:  # not the main thread: nothing to ignore from here
            break
    gc.freeze()
    exec("")
