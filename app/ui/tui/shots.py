"""`s`: an SVG screenshot of the screen as it is, saved in the working directory; the
notice says where (Textual draws it)."""

from __future__ import annotations

import os
import time

from textual.app import App

from ecoready.domain.text import inert


def save_screenshot(app: App[int], run_id: str) -> str | None:
    name = f"ecoready-{run_id[:8] or 'screen'}-{time.strftime('%H%M%S')}.svg"
    try:
        path = app.save_screenshot(name, os.getcwd())
    except OSError as exc:
        app.notify(inert(f"cannot save the screenshot: {exc}"), severity="error", markup=False)
        return None
    app.notify(inert(f"saved {path}"), title="screenshot", markup=False)
    return path
