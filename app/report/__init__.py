"""Exporters: pure functions Report -> text. `FORMATS` maps each output option to its
renderer, imported only when used."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from app.model import Report

# option name -> module in app.report with `render(report) -> str`
FORMATS: dict[str, str] = {"json": "json", "md": "markdown", "html": "html", "junit": "junit"}


def renderer(fmt: str) -> Callable[[Report], str]:
    module = importlib.import_module(f"app.report.{FORMATS[fmt]}")
    render: Callable[[Report], str] = module.render
    return render
