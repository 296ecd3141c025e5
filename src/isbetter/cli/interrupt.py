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

The interrupt is raised only where it can reach :func:`~isbetter.cli.main`. Where C
code runs Python code and prints what it raises instead of passing it on, the
KeyboardInterrupt would be printed as a traceback and the command would go on: an import
that C code makes (an extension's initialisation, during the first seconds' heavy
imports; numpy's ``import_array`` prints its import's error with ``PyErr_Print``), a
``__del__``. There the handler only remembers the signal and sends it again 50 ms later,
until it lands outside them; an import statement passes the interrupt on as any code
does. A printer the handler cannot see (a weak reference's callback) is silenced:
:func:`sys.unraisablehook` and :func:`sys.excepthook`, which such C code calls, say
nothing of the command's interrupt and send it again, so that the command still stops.
"""

from __future__ import annotations

import builtins
import dis
import gc
import signal
import sys
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
#: while :func:`watch` runs: the frames below it (imports among them are not ours to mind)
#: and the timer that sends a deferred signal again
_WATCH: dict[str, Any] = {}
_LOCK = threading.RLock()  # the handler may take it in the main thread while it holds it

#: the exit codes of a command stopped by Ctrl-C (SIGINT) or SIGTERM
EXIT_CODES = (128 + signal.SIGINT, 128 + signal.SIGTERM)
#: seconds before a signal that landed where it could not be raised is sent again
RETRY = 0.05
#: the import machinery's frames (Python's importlib, run by the C import code)
_IMPORTLIB = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
_IMPORT_OPCODES = frozenset(dis.opmap[name] for name in ("IMPORT_NAME", "IMPORT_FROM"))


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    if _STOPPING.is_set() or not _WATCH:  # already stopping (once is enough), or done
        return
    if not _SIGNALS:
        _SIGNALS.append(signum)
    _SEEN.set()
    if _unsafe(frame):  # C code would print the KeyboardInterrupt: raise it just after
        _again(signum)
        return
    raise KeyboardInterrupt


def _unsafe(frame: FrameType | None) -> bool:
    """Whether C code that would print a KeyboardInterrupt raised at `frame` runs below it.

    That is: a finaliser, or an import that C code made (an extension's initialisation,
    numpy's ``import_array``), begun since :func:`watch` began. Imports made by import
    statements, :func:`importlib.import_module` and ``from`` lists pass the interrupt on
    (``import pymc``, seconds long, stops at once).
    """
    outer = _WATCH.get("outer", ())
    while frame is not None and not any(frame is f for f in outer):
        code = frame.f_code
        if code.co_name == "__del__":
            return True
        if code.co_name == "_find_and_load" and code.co_filename in _IMPORTLIB:
            if _made_by_c(frame.f_back):
                return True
        frame = frame.f_back
    return False


def _made_by_c(caller: FrameType | None) -> bool:
    """Whether the import that `caller` (the frame below ``_find_and_load``) made is C code's."""
    if caller is None:
        return True
    if caller.f_code.co_filename in _IMPORTLIB:
        # _call_with_frames_removed(f, ...): C when `f` is an extension's initialisation,
        # not the __import__ of a from list
        return caller.f_code.co_name == "_call_with_frames_removed" and caller.f_locals.get(
            "f"
        ) is not getattr(builtins, "__import__", None)
    # an import statement's opcode; anything else is a call of C code that imports
    return caller.f_code.co_code[caller.f_lasti] not in _IMPORT_OPCODES


def _again(signum: int) -> None:
    """Send `signum` to the main thread again in :data:`RETRY` seconds.

    A real signal: it interrupts a blocking call as the first one did.
    """
    with _LOCK:
        if not _WATCH or _STOPPING.is_set() or _WATCH.get("timer") is not None:
            return
        main = threading.main_thread().ident
        assert main is not None

        def send() -> None:
            with _LOCK:
                if _WATCH.get("timer") is timer and not _STOPPING.is_set():
                    _WATCH["timer"] = None
                    signal.pthread_kill(main, signum)

        timer = threading.Timer(RETRY, send)
        timer.daemon = True
        _WATCH["timer"] = timer
        timer.start()


def _quiet_hook(hook: Any, kind: str) -> Any:
    """Return `hook` (sys.excepthook or sys.unraisablehook) silent about the interrupt.

    C code that catches an exception of Python code it ran prints it through these hooks
    (``PyErr_Print``, ``PyErr_WriteUnraisable``); the command's interrupt is said in its
    one line, and sent again so that the command stops.
    """

    def quiet(*args: Any) -> None:
        error = args[0].exc_type if kind == "unraisable" else args[0]
        if _SEEN.is_set() and isinstance(error, type) and issubclass(error, KeyboardInterrupt):
            _again(_SIGNALS[0] if _SIGNALS else signal.SIGINT)
            return
        hook(*args)

    return quiet


@contextmanager
def watch() -> Iterator[None]:
    """Remember every Ctrl-C and SIGTERM while the block runs (main thread, default handlers)."""
    _SEEN.clear()
    _STOPPING.clear()
    _SIGNALS.clear()
    main = threading.current_thread() is threading.main_thread()
    outer: list[FrameType] = []
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:  # the frames below the command: an import running it, say
        outer.append(frame)
        frame = frame.f_back
    _WATCH.update(outer=outer, timer=None)
    installed = main and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if installed:
        signal.signal(signal.SIGINT, _on_interrupt)
    terminate = main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if terminate:
        signal.signal(signal.SIGTERM, _on_interrupt)
    show, hooks = warnings.showwarning, (sys.excepthook, sys.unraisablehook)

    def quiet_once_interrupted(*args: Any, **kwargs: Any) -> None:
        if not _SEEN.is_set():
            show(*args, **kwargs)

    warnings.showwarning = quiet_once_interrupted
    sys.excepthook = _quiet_hook(hooks[0], "except")
    sys.unraisablehook = _quiet_hook(hooks[1], "unraisable")
    try:
        yield
    finally:
        with _LOCK:  # the handler is quiet, and no signal is sent again, from now on
            timer = _WATCH.get("timer")
            _WATCH.clear()
        if timer is not None:
            timer.cancel()
        warnings.showwarning = show
        sys.excepthook, sys.unraisablehook = hooks
        # restoring a handler first runs the pending ones (ours, quiet now that _WATCH is empty)
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
