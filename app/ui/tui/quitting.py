"""How the app ends, whatever ends it (`q`, Ctrl-C, SIGTERM or SIGHUP, the terminal gone):
stop what runs, remove what the run started while saying so, then exit with the right code.

`CleanQuit` is the app's base class; the app says what it shows meanwhile (`stopping`),
whether stopping now cuts cells short (`cut_short`) and the run's own code (`run_code`).
"""

from __future__ import annotations

import asyncio
import sys
import threading

from textual import work
from textual.app import App
from textual.driver import Driver
from textual.worker import Worker

from ecoready.domain.text import inert
from ecoready.ui.signals import release_stop_signals
from ecoready.ui.tui.runs import RunSession

INTERRUPTED = 130  # the exit code when q stops a run under way, as Ctrl-C does headless


class CleanQuit(App[int]):
    def __init__(self) -> None:
        super().__init__()
        self.session: RunSession | None = None
        self._quitting = False
        self._session_closed = False

    def get_driver_class(self) -> type[Driver]:
        return ending_driver(super().get_driver_class())

    def stopping(self, notice: str) -> None:
        """Show what the app does while it stops."""

    def cut_short(self) -> bool:
        """Whether stopping the run now leaves cells unfinished (or a run not yet planned)."""
        return True

    def run_code(self) -> int:
        """The run's own exit code (0 ready, 1 not ready, 3 error)."""
        return 0

    def action_quit_clean(self) -> None:
        self.quit_clean()

    def _stop_signal(self, signum: int) -> None:
        """Quit as `q` does, exiting 128 + the signal; later ones change nothing."""
        release_stop_signals(asyncio.get_running_loop(), ignore=True)
        self.call_later(self.quit_clean, 128 + signum)

    def quit_clean(self, signal_code: int | None = None) -> None:
        """Stop what runs, remove what the run started (saying so meanwhile), then exit:
        128+signal after SIGTERM/SIGHUP, 130 when a run was stopped (as after Ctrl-C in
        the headless path), else the run's own code (0 ready, 1 not ready, 3 error)."""
        if self._quitting:
            return
        self._quitting = True
        while len(self.screen_stack) > 1:
            self.pop_screen()
        running = [w for w in self.workers if w.group in ("run", "rerun") and w.is_running]
        self.stopping("stopping the run and removing its containers…" if running else "removing the run's leftovers…")
        # a run that only has its final cleanup left ends with its own code
        cut_short = bool(running) and self.cut_short()
        self._quit_after_cleanup(running, signal_code or (INTERRUPTED if cut_short else None))

    @work(group="quit", exit_on_error=False)
    async def _quit_after_cleanup(self, running: list[Worker[None]], code: int | None) -> None:
        # A worker, not the action itself: the screen keeps drawing the notice meanwhile.
        for worker in running:
            worker.cancel()
        for worker in running:
            try:
                await worker.wait()
            except Exception:  # noqa: S110 - cancelled or failed: either way it ended
                pass
        await self._close_session()
        code = self.run_code() if code is None else code
        self.exit(code, return_code=code)

    async def _close_session(self) -> None:
        if self._session_closed or self.session is None:
            return
        self._session_closed = True
        try:
            await self.session.close()
        except Exception as exc:
            self.notify(inert(f"cleanup failed: {exc}"), severity="error", markup=False)

    async def on_unmount(self) -> None:
        await self._close_session()  # whatever ended the app, the run's resources go


def ending_driver(base: type[Driver]) -> type[Driver]:
    """Textual's terminal driver, made to let the process end when the terminal is gone.

    Its input thread reads the terminal until the driver's `exit_event` is set, which it
    does only after writing to the terminal the codes that leave application mode: with the
    terminal gone (an ssh session dropped, a tmux server killed while the app quits) that
    writing fails first, the event is never set, the thread spins on a terminal that reads
    as ended, and the process, its cleanup done, can never exit (seen: 33 minutes at half
    a core after `kill-server`). Here the event is set whatever the writing does."""
    if sys.platform == "win32":
        return base
    from textual.drivers.linux_driver import LinuxDriver

    if base is not LinuxDriver:  # another driver chosen (TEXTUAL_DRIVER): as it is
        return base

    class EndingDriver(LinuxDriver):
        def stop_application_mode(self) -> None:
            try:
                super().stop_application_mode()
            finally:
                stop = getattr(self, "exit_event", None)
                if isinstance(stop, threading.Event):
                    stop.set()  # the input thread ends within its select timeout

    return EndingDriver
