"""One diagnosis per cell, said alike by every view: the run summary, Markdown, HTML, JUnit,
the TUI's reason line and detail screen, and `ecoready plan` (text and HTML's ordered list).

The report is one a run makes: HAProxy whose start fails natively on amd64 and emulated on
arm64 the same way (its log's telling line), and a server whose arm64 image is refused at
the image stage (it never ran). Every view says "not an arch gap" for the first, none says
"confirm on a native host"; none calls the second "ran emulated" nor gives it a time.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ecoready.domain.blame import Blame, Cause, Outcome, Stage, Status
from ecoready.domain.model import Category, CellResult, ComponentOrigin, HostFacts, Migration, Profile, Report
from ecoready.domain.model import StageResult as Result
from ecoready.report import html, junit, markdown
from ecoready.report.migration import NOT_AN_ARCH_GAP, Action, plan_steps
from ecoready.report.plan_text import render_plan
from ecoready.report.reasons import advice_for
from ecoready.report.text_grid import render_summary
from ecoready.ui.tui.answer import reason_text
from ecoready.ui.tui.detail import detail_renderable, plain

HOST = HostFacts("graviton-less", "amd64", ("arm64",), {"arm64": "qemu-aarch64 version 10.0.2"})
ALERT = "[ALERT]    (1) : config : parsing [/usr/local/etc/haproxy/haproxy.cfg:12] : unknown keyword 'mysql-check'"
NATIVE_ELSEWHERE = "confirm on a native"


def cell(
    component: str, arch: str, status: Status, stages: tuple[Result, ...], detail: str = "", log: tuple[str, ...] = ()
) -> CellResult:
    return CellResult(
        f"{component}/{arch}",
        component,
        component,
        Category.LOAD_BALANCER,
        arch,
        HOST.name,
        arch == "arm64",
        status=status,
        seconds=sum(s.seconds for s in stages),
        detail=detail,
        stages=stages,
        log_tail=log,
    )


def the_report() -> Report:
    image = Result(Stage.IMAGE, Outcome.PASS, 0.7, "index sha256:0123")
    exited = Blame(Cause.DOES_NOT_START)
    start = Result(Stage.START, Outcome.FAIL, 2.4, f"exited with code 1: {ALERT}", (), exited)
    refused = Blame(Cause.MISLABELLED_IMAGE)
    mislabelled = Result(
        Stage.IMAGE, Outcome.FAIL, 0.1, "the index says arm64, the image's config says amd64", (), refused
    )
    cells = [
        cell("haproxy", "amd64", Status.BROKEN, (image, start), detail=start.detail, log=(ALERT,)),
        cell("haproxy", "arm64", Status.BROKEN, (image, start), detail=start.detail, log=(ALERT,)),
        cell("odd", "amd64", Status.READY, (image, Result(Stage.START, Outcome.PASS, 3.0, "ready in 3.0 s"))),
        cell("odd", "arm64", Status.BROKEN, (mislabelled,), detail="mislabelled: " + mislabelled.detail),
    ]
    return Report(
        schema_version=1,
        run_id="b" * 32,
        tool_version="0.1.0",
        matrix="matrix.toml",
        profile=Profile.SMOKE,
        started_at="2026-12-02T18:00:00Z",
        finished_at="2026-12-02T18:01:00Z",
        hosts=(HOST,),
        arches=("amd64", "arm64"),
        cells={c.id: c for c in cells},
        migration=Migration(origins=(ComponentOrigin("haproxy", "haproxy:3.2"), ComponentOrigin("odd", "odd:1"))),
    )


def words(text: str) -> str:
    """A view's text with markup and wrapping undone, to look for the same words."""
    text = re.sub(r"<[^>]+>", " ", text).replace("&#x27;", "'").replace("&#39;", "'").replace("&quot;", '"')
    return re.sub(r"\s+", " ", text.replace("\\", ""))


def views(report: Report) -> dict[str, str]:
    tui = {
        cid: plain(detail_renderable(c, 400, advice_for(report, cid)), 400) + reason_text(report, c).plain
        for cid, c in report.cells.items()
    }
    return {
        "summary": render_summary(report),
        "markdown": markdown.render(report),
        "html": html.render(report),
        "junit": junit.render(report),
        "plan": render_plan(report, 400),
        **{f"tui {cid}": text for cid, text in tui.items()},
    }


def test_a_failure_both_arches_share_is_no_arch_gap_in_every_view() -> None:
    report = the_report()
    emulated = advice_for(report, "haproxy/arm64")
    native = advice_for(report, "haproxy/amd64")
    assert emulated is not None and native is not None
    assert NOT_AN_ARCH_GAP in emulated.remedy and "on amd64 (natively)" in emulated.remedy
    assert NOT_AN_ARCH_GAP in native.remedy and "on arm64 (emulated)" in native.remedy
    (step,) = [s for s in plan_steps(report) if (s.component, s.arch) == ("haproxy", "arm64")]
    assert step.action is Action.BLOCKED and NOT_AN_ARCH_GAP in step.why
    for name, text in views(report).items():
        said = words(text)
        assert NATIVE_ELSEWHERE not in said, name
        if name.startswith("tui") and "haproxy" not in name:
            continue
        assert "not an arch gap" in said, name
        for advised in (native,) if name == "tui haproxy/amd64" else (emulated,) if name.startswith("tui") else ():
            assert words(advised.remedy) in said and words(advised.reason) in said, name
        if name in ("summary", "markdown", "html", "junit"):
            for advised in (native, emulated):  # the one reason and remedy of each cell, worded once
                assert words(advised.remedy) in said and words(advised.reason) in said, name


def test_a_cell_that_never_ran_is_not_called_emulated_nor_timed_in_any_view() -> None:
    report = the_report()
    odd = report.cells["odd/arm64"]
    for name, text in views(report).items():
        said = words(text)
        assert "broken 0.1s" not in said and "broken 0.1 s" not in said, name
    detail = views(report)["tui odd/arm64"]
    assert "ᵉemulated" not in detail and "it did not run" in detail
    (case,) = [
        c
        for c in ET.fromstring(junit.render(report)).iter("testcase")
        if c.get("name", "").startswith("odd") and "arm64" in (c.get("name", "") + c.get("classname", ""))
    ]
    assert "ran emulated" not in ET.tostring(case, encoding="unicode")
    assert odd.emulated  # planned emulated: only what ran is said so


def test_the_html_plan_lists_what_to_change_in_the_order_plan_and_markdown_do() -> None:
    report = the_report()
    page = html.render(report)
    listed = re.findall(r"<li>(.*?)</li>", page[page.index("<h2>Migration plan</h2>") :].split("</ol>")[0])
    plan = render_plan(report, 1000).splitlines()
    numbered = [line.split(". ", 1)[1] for line in plan if re.match(r"\s*\d+\. ", line)]
    md = [line.split(". ", 1)[1] for line in markdown.render(report).splitlines() if re.match(r"\d+\. ", line)]
    assert listed and [words(x) for x in listed] == [words(x) for x in numbered] == [words(x) for x in md]
