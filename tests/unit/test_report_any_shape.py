"""Every report docs/report-schema.json allows renders in every view in bounded time.

Reports are drawn from the schema itself (tests/support/schema_reports.py), checked against
it, then read as `ecoready report` reads a file and shown every way ecoready shows one: the
text summary (with the verdict lines), Markdown, HTML, JUnit, the JSON round trip (what is
written reads back as the same report) and `ecoready plan`'s migration plan. Each example
has `SECONDS` for all of it: a view that loops (a shape no run makes, such as a non-ready
cell with no failed stage) fails here, never hangs. A report the loader refuses (a schema-
valid shape the model cannot hold, e.g. one cell id twice) must be refused in one clean
`ReportError` line.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings

from ecoready.domain.errors import ReportError
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.exporter_text import run_line
from ecoready.report.load import parse_report
from ecoready.report.markdown import migration
from ecoready.report.text_grid import render_summary
from tests.support.schema_reports import report_documents, schema

SECONDS = 10


class TookTooLong(Exception):
    pass


@contextmanager
def at_most(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise TookTooLong(f"a view took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(report_documents())
def test_every_schema_valid_report_renders_in_every_view(document: dict[str, Any]) -> None:
    jsonschema.validate(document, schema(), cls=jsonschema.Draft202012Validator)
    text = json.dumps(document)
    with at_most(SECONDS):
        try:
            report = parse_report(text, "drawn.json")
        except ReportError as exc:
            assert str(exc).startswith("drawn.json") and "\n" not in str(exc), str(exc)
            return
        views = {
            "summary": render_summary(report),
            "markdown": markdown.render(report),
            "html": html.render(report),
            "junit": junit.render(report),
            "plan": "\n".join([run_line(report), *migration(report)]),
        }
        written = json_report.render(report)
        again = parse_report(written, "written.json")
        assert json_report.render(again) == written
    assert all(isinstance(view, str) for view in views.values())
    assert views["html"].lstrip().lower().startswith("<!doctype html")
