"""Driving the app as a person does: menus by arrows and enter, waiting for what shows."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import OptionList

from ecoready.ui.tui.app import EcoreadyApp


async def choose(pilot: Pilot, option_id: str) -> None:
    """Pick an option of the open menu with arrows and enter."""
    options = pilot.app.screen.query_one(OptionList)
    target = options.get_option_index(option_id)
    while options.highlighted != target:
        await pilot.press("down")
    await pilot.press("enter")
    await pilot.pause()


async def wait_until(pilot: Pilot, done: Callable[[], bool], what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout  # a guard against hanging, not a speed check
    while not done():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        await pilot.pause(0.2)


async def quit_and_wait(app: EcoreadyApp, pilot: Pilot, timeout: float = 300) -> None:
    """Press q and wait until the app has cleaned up and chosen its exit code."""
    await pilot.press("q")
    deadline = time.monotonic() + timeout
    while app.return_code is None:
        assert time.monotonic() < deadline, "q did not end the app"
        await asyncio.sleep(0.1)
