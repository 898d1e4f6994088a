"""A `<script>`, Rich markup, ANSI/OSC escapes, a lone control character and bidi or
invisible characters (U+202E and friends) in a component name, a detail and a log line come
out inert in every output: HTML, Markdown (as GitHub would render it), JUnit, the terminal
grid, the diff and the webhook text, the characters that would act shown escaped.
(The TUI: tests/tui/test_inert.py.)"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser

from markdown_it import MarkdownIt

from ecoready.domain.model import (
    AuditResult,
    BinaryAudit,
    Check,
    Finding,
    Note,
    Outcome,
    Report,
    Severity,
    Stage,
    StageResult,
    Status,
)
from ecoready.judge.diff import diff, diff_text
from ecoready.judge.webhook import payload
from ecoready.report import html, junit, markdown
from ecoready.report.text_grid import render_summary
from tests.support.reports_sample import lab_report

SCRIPT = "<script>alert(1)</script>"
MARKUP = "[bold red]boom[/][link=https://evil.example]click[/link]"
ANSI = "\x1b[31mred\x1b[0m"
OSC = "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"
# a right-to-left override, an isolate, a zero-width space, a tag character, a lone BEL
BIDI = "evil\u202egnp.exe\u2066x\u2069\u200b\U000e0041\x07"
PAYLOAD = f"{MARKUP} {SCRIPT} {ANSI} {OSC} <img src=x onerror=alert(2)> [x](https://evil.example) ``` | {BIDI}"
ESCAPES = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u2069", "\u200b", "\U000e0041")
SHOWN = "evil\\u202egnp.exe\\u2066x\\u2069\\u200b\\U000e0041\\x07"  # as every view shows it


def poisoned() -> Report:
    report = lab_report("lab-mixed")
    cell = report.cells["mariadb-aria-only/amd64"]
    smoke = StageResult(Stage.SMOKE, Outcome.FAIL, 0.1, PAYLOAD, (Check("crud", Outcome.FAIL, PAYLOAD, 0.1),))
    bad = replace(
        cell,
        id=f"{PAYLOAD}/amd64",
        component=PAYLOAD,
        name=PAYLOAD,
        status=Status.PARTIAL,
        detail=PAYLOAD,
        stages=(*cell.stages[:2], smoke),
        log_tail=("a normal line", PAYLOAD, "```", "</pre></details><script>alert(3)</script>"),
        # a program's path and build notes come from the image
        audit=AuditResult(
            "amd64",
            "sha256:0",
            (BinaryAudit(PAYLOAD, PAYLOAD, "amd64", 10, 4096, build=PAYLOAD, x86_needs="x86-64"),),
            (Finding(PAYLOAD, "x86-level", Severity.NOTE, PAYLOAD),),
        ),
    )
    cells = {k: v for k, v in report.cells.items() if k != cell.id}
    cells[bad.id] = bad
    return replace(report, cells=cells, notes=(Note(PAYLOAD),), matrix=f"m{PAYLOAD}.toml")


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(text)
    parser.close()
    return parser.tags


def assert_no_escapes(text: str, *, shown: bool = True) -> None:
    for esc in ESCAPES:
        assert esc not in text
    if shown:
        assert SHOWN in text


def assert_no_active_html(text: str) -> None:
    found = tags(text)
    names = {t for t, _ in found}
    assert not names & {"script", "img", "a", "iframe"}, names
    for tag, attrs in found:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "src" not in attrs and "href" not in attrs, (tag, attrs)


def test_html_shows_the_payload_as_text() -> None:
    text = html.render(poisoned())
    assert_no_escapes(text)
    assert_no_active_html(text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "[bold red]boom[/]" in text  # Rich markup is just text in HTML
    assert "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(3)" in text  # a log line cannot close its block


def test_markdown_as_github_renders_it_shows_the_payload_as_text() -> None:
    text = markdown.render(poisoned())
    assert_no_escapes(text)
    # GitHub passes (sanitised) raw HTML through: render with HTML on, the strict case
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert_no_active_html(rendered.replace("<details>", "").replace("<summary>", ""))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "[bold red]boom[/]" in rendered and "[x](https://evil.example)" in rendered  # not a link
    # the ``` log line stays inside the code block: the block still ends with the script line as text
    assert "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(3)&lt;/script&gt;\n</code></pre>" in rendered
    # the grid stays a table with the same number of columns in every row despite the `|`
    grid = rendered.split("</table>")[0]
    rows = grid.split("<tr>")[1:]
    assert {row.count("<td") + row.count("<th") for row in rows} == {4}


def test_junit_stays_well_formed_and_inert() -> None:
    text = junit.render(poisoned())
    assert_no_escapes(text)
    root = ET.fromstring(text)  # well-formed despite the payload
    names = [c.get("name") or "" for c in root.iter("testcase")]
    assert any(n.startswith("[bold red]boom[/]") and SCRIPT in n for n in names)


def test_terminal_grid_diff_and_webhook_text_are_inert() -> None:
    report = poisoned()
    assert_no_escapes(render_summary(report))
    change = diff(lab_report("lab-mixed"), report)
    assert change.changed
    assert_no_escapes(diff_text(change))
    text = payload(change)["text"]
    assert_no_escapes(text)
    # Slack reads <...> as links and mentions: none may survive
    assert "<" not in text and ">" not in text and "&lt;script&gt;" in text
