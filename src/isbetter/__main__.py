"""The ``isbetter`` program: the console script's entry point and ``python -m isbetter``.

:func:`program` first makes a Ctrl-C (or SIGTERM) during the command line's imports one
line and exit 130 (143), as :func:`isbetter.cli.main` does once its handler is in place;
only then does it import the command line. Before, the script imported
:mod:`isbetter.cli` first, and a Ctrl-C in those ~50 ms printed Python's
KeyboardInterrupt traceback. ``import isbetter`` installs no handler: only this entry
point does, when the program runs.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import Any, NoReturn

__all__ = ["program"]


def _stop(signum: int, frame: FrameType | None) -> None:
    """Stop the program at once: nothing has been read, written or started yet."""
    reason = "terminated" if signum == signal.SIGTERM else "interrupted"
    os.write(2, f"isbetter: {reason}\n".encode())
    os._exit(128 + signum)


def program() -> NoReturn:
    """Run the ``isbetter`` program; a Ctrl-C at any moment is one line and exit 130."""
    defaults: dict[int, Any] = {
        signal.SIGINT: signal.default_int_handler,
        signal.SIGTERM: signal.SIG_DFL,
    }
    # only where they are the defaults (a background job has Ctrl-C ignored: keep it so)
    quiet = [s for s, handler in defaults.items() if signal.getsignal(s) == handler]
    for signum in quiet:
        signal.signal(signum, _stop)
    from isbetter.cli import interrupt
    from isbetter.cli import program as run

    for signum in quiet:  # main() installs its own handler where it finds the defaults
        signal.signal(signum, defaults[signum])
    try:
        run()
    except KeyboardInterrupt:  # in the instant before main() installs its handler
        print("isbetter: interrupted", file=sys.stderr)
        interrupt.exiting()
        sys.exit(130)


if __name__ == "__main__":
    program()
