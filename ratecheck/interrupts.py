"""Telling a real Ctrl-C from code that raises KeyboardInterrupt itself (a plugin while it loads)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Interrupts", "interrupts_seen"]


class Interrupts:
    """Whether a real SIGINT arrived (set by ``interrupts_seen``)."""

    interrupted = False


@contextlib.contextmanager
def interrupts_seen() -> Iterator[Interrupts]:
    """Tell a real Ctrl-C (SIGINT delivered while a plugin loads) from a plugin that raises
    KeyboardInterrupt itself: only the first may interrupt ratecheck; the second is a broken plugin."""
    seen = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield seen  # signals reach the main thread only: a KeyboardInterrupt here is the plugin's
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: Any) -> None:
        if previous == signal.SIG_IGN:
            return
        seen.interrupted = True
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGINT, on_interrupt)
    except (ValueError, OSError):  # no signals here (an embedded interpreter)
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)
