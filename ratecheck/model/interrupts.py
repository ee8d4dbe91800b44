"""Telling a real Ctrl-C from code that raises KeyboardInterrupt (or SystemExit) itself.

Only the command line installs a SIGINT handler (``cli_interrupts``), restored when the command ends:
under it a real Ctrl-C is recorded, so plugin code (a paper while it loads, a claim's decide) that
raises KeyboardInterrupt, calls sys.exit or raises any other BaseException is a broken plugin, never
an interrupt or an exit of ratecheck. A host program (ratecheck as a library, pytest) keeps its own
handler: there a KeyboardInterrupt cannot be told apart and is the host's to handle.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["cli_interrupts", "describe", "is_real_interrupt", "is_foreign_exit", "raised_in"]

_PACKAGE = Path(__file__).resolve().parent


class _State:
    installed = False  # the CLI's handler is in place
    real = False  # a SIGINT arrived under it


@contextlib.contextmanager
def cli_interrupts() -> Iterator[None]:
    """The command line's SIGINT handler for the duration of a command (main thread only): it
    records the interrupt and raises KeyboardInterrupt; the previous handler comes back on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: Any) -> None:
        _State.real = True
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, on_interrupt)
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        yield
        return
    saved = _State.installed, _State.real
    _State.installed, _State.real = True, False
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _State.installed, _State.real = saved


def is_real_interrupt(exc: BaseException) -> bool:
    """A KeyboardInterrupt that a Ctrl-C caused: under the CLI's handler only if SIGINT arrived;
    outside the CLI it cannot be told apart and is taken as real (the host handles it)."""
    return isinstance(exc, KeyboardInterrupt) and (_State.real or not _State.installed)


def is_foreign_exit(exc: BaseException) -> bool:
    """A BaseException that plugin code must not raise: sys.exit, a KeyboardInterrupt with no Ctrl-C
    behind it, GeneratorExit and the like (not an ordinary Exception, not a real interrupt)."""
    return not isinstance(exc, Exception) and not is_real_interrupt(exc)


def describe(exc: BaseException, during: str = "") -> str:
    """What the code did, in words (``during``: e.g. 'while loading')."""
    when = f" {during}" if during else ""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}){when} (a plugin must not end the program)"
    if isinstance(exc, KeyboardInterrupt):
        return f"it raised KeyboardInterrupt{when} (no Ctrl-C was pressed)"
    return f"{type(exc).__name__}: {exc}"


def raised_in(exc: BaseException) -> str | None:
    """'FILE, line N' of the innermost frame outside ratecheck and the standard library that the
    exception passed through (the plugin to blame), or None."""
    stdlib = Path(traceback.__file__).resolve().parent
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename).resolve()
        inside = path.is_relative_to(_PACKAGE) or path.is_relative_to(stdlib) or frame.filename.startswith("<")
        if not inside:
            found = f"{frame.filename}, line {frame.lineno}"
    return found
