"""Exporters: pure functions Report -> text, one module each (`render(report) -> str`).

`FORMATS` is the one list of them: the command line's output options, the TUI's export
menu and file suffixes all read it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from ecoready.domain.model import Report

Renderer = Callable[[Report], str]


@dataclass(frozen=True)
class Format:
    option: str  # the command-line option that asks for it: --json, --md, --html, --junit
    module: str  # ecoready.report.<module> renders it
    suffix: str
    title: str
    help: str  # the output option's help text


FORMATS: tuple[Format, ...] = (
    Format("json", "json", ".json", "JSON", "the JSON report (docs/report-schema.json)"),
    Format("md", "markdown", ".md", "Markdown", "Markdown: the grid, what failed, benchmarks"),
    Format("html", "html", ".html", "HTML", "one self-contained HTML file"),
    Format("junit", "junit", ".xml", "JUnit XML", "JUnit XML: one testcase per cell"),
)
OPTIONS: tuple[str, ...] = tuple(f.option for f in FORMATS)


def renderer(option: str) -> Renderer:
    """The renderer of the format an output option names (`json`, `md`, `html`, `junit`)."""
    (fmt,) = (f for f in FORMATS if f.option == option)
    return _render_of(fmt)


def available() -> list[tuple[Format, Renderer]]:
    """The formats whose exporter module is installed, each with its renderer."""
    return [(fmt, _render_of(fmt)) for fmt in FORMATS if importlib.util.find_spec(_module(fmt)) is not None]


def _module(fmt: Format) -> str:
    return f"{__name__}.{fmt.module}"


def _render_of(fmt: Format) -> Renderer:
    render: Renderer = importlib.import_module(_module(fmt)).render
    return render
