"""The signals that stop a run (SIGINT, SIGTERM, SIGHUP), for both front ends: caught by
the event loop while the run lasts; after the first one the exit code is decided and the
cleanup must not be cut short, so the rest are ignored until the process exits."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

# SIGINT too in the TUI: on a terminal Ctrl-C is a key, but `kill -INT` (or `timeout`) is not.
# Those this system has: Windows' Python has no SIGHUP.
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def catch_stop_signals(loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]) -> None:
    """`handler(signum)` on each stop signal, in the loop (not where the loop cannot: a
    thread other than the main one, as in tests)."""
    for sig in STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, handler, sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass


def release_stop_signals(loop: asyncio.AbstractEventLoop, *, ignore: bool) -> None:
    """Take the loop's handlers back: the defaults return, or with `ignore` (a signal came
    already) further ones are ignored until the exit. Taken back here, not left to the
    loop: closing, it would put the defaults back, and a late SIGINT would kill the process."""
    for sig in STOP_SIGNALS:
        try:
            loop.remove_signal_handler(sig)
            if ignore:
                signal.signal(sig, signal.SIG_IGN)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
