"""Each probe kind says how far it was verified (app/matrix/kinds.py): `lab`, run here
against the real software, or `contract`, written from the image's documented contract
only. A contract-only probe's non-ready verdict says so in every view (the TUI's reason
line and detail, the summary, Markdown, HTML, JUnit; JSON keeps the cell's
`verification`), so a probe bug is never silently blamed on a component."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from rich.text import Text

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.model import CONTRACT_CAVEAT, Check, Outcome, Stage, StageResult, Verification
from ecoready.matrix.kinds import KINDS, verification
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.reasons import advice
from ecoready.report.text_grid import render_summary
from ecoready.ui.tui.answer import reason_text
from ecoready.ui.tui.detail import advice_section
from tests.unit.test_blame import cell_of, report_of


def test_every_probe_kind_states_its_verification() -> None:
    for name, kind in KINDS.items():
        assert isinstance(kind.verified, Verification), name
        for option, values in kind.contract_when.items():
            assert option in kind.options and values, (name, option)
            assert set(values) <= set(kind.choices.get(option, values)), (name, option)
    # what the lab cannot run is contract-only (design.md, "Testing")
    for name in ("proxysql", "maxscale", "pmm", "pxc", "xtrabackup"):
        assert KINDS[name].verified is Verification.CONTRACT, name
    assert verification(KINDS["shell"], {"client": "mariadb"}) is Verification.LAB
    assert verification(KINDS["shell"], {"client": "mysqlsh"}) is Verification.CONTRACT


def smoke_failed() -> tuple[StageResult, ...]:
    return (
        StageResult(Stage.IMAGE, Outcome.PASS, 0.1, ""),
        StageResult(Stage.START, Outcome.PASS, 0.1, ""),
        StageResult(
            Stage.SMOKE,
            Outcome.FAIL,
            0.2,
            "failed: routing",
            (Check("routing", Outcome.FAIL, "no route to the backend"),),
            Blame(Cause.CHECK_FAILED),
        ),
    )


def views(report: object) -> dict[str, str]:
    return {
        "text": render_summary(report),  # type: ignore[arg-type]
        "md": markdown.render(report),  # type: ignore[arg-type]
        "html": html.render(report),  # type: ignore[arg-type]
        "junit": junit.render(report),  # type: ignore[arg-type]
    }


@pytest.mark.parametrize("kind", [Verification.CONTRACT, Verification.LAB, None], ids=str)
def test_a_contract_only_probes_failure_says_it_may_be_ecoreadys_in_every_view(kind: Verification | None) -> None:
    cell = cell_of("proxysql", "amd64", smoke_failed(), verification=kind)
    report = report_of(cell)
    (advised,) = advice(report)
    said = kind is Verification.CONTRACT
    assert advised.unverified is said and (CONTRACT_CAVEAT in advised.reason) is said
    out = views(report)
    assert (CONTRACT_CAVEAT in out["text"]) is said
    assert (markdown.md(CONTRACT_CAVEAT) in out["md"]) is said
    assert (html.esc(CONTRACT_CAVEAT) in out["html"]) is said
    case = ET.fromstring(out["junit"]).find(".//testcase/failure")
    assert case is not None and (CONTRACT_CAVEAT in (case.text or "")) is said
    assert (CONTRACT_CAVEAT in reason_text(report, cell).plain) is said  # the TUI's reason line
    section = advice_section(advised)
    assert isinstance(section, Text) and (CONTRACT_CAVEAT in section.plain) is said  # the TUI's detail
    saved = json.loads(json_report.render(report))["cells"][0]
    assert saved["verification"] == (kind.value if kind else None)
    assert parse_report(json_report.render(report)).cells[cell.id].verification is kind


def test_what_no_probe_decided_carries_no_caveat() -> None:
    """A missing image or a registry's trouble is not the probe's word on the component."""
    missing = (StageResult(Stage.IMAGE, Outcome.FAIL, 0.1, "amd64 only", blame=Blame(Cause.NOT_PUBLISHED)),)
    unreachable = (StageResult(Stage.IMAGE, Outcome.ERROR, 0.1, "down", blame=Blame(Cause.REGISTRY, "docker.io")),)
    report = report_of(
        cell_of("a", "arm64", missing, verification=Verification.CONTRACT),
        cell_of("b", "arm64", unreachable, verification=Verification.CONTRACT),
    )
    assert [a.unverified for a in advice(report)] == [False, False]
    assert CONTRACT_CAVEAT not in render_summary(report)


def test_the_run_says_each_cells_verification_from_its_row() -> None:
    from ecoready.domain.state import fold
    from ecoready.run.runner import Runner
    from tests.support.fake_host import cell, component, plan, rig

    server = component("db", "server", "mysql:8.4")
    percona = component("sh", "shell", "mysql:8.4", options={"client": "mysqlsh"})
    proxy = component("px", "proxysql", "proxysql/proxysql:3.0.2")
    cells = [cell(server), cell(percona, server), cell(proxy, server)]
    started = Runner(plan(cells), rig().run).planned()
    said = {p.component: p.verification for p in started.cells}
    assert said == {"db": Verification.LAB, "sh": Verification.CONTRACT, "px": Verification.CONTRACT}
    report = fold([started])
    assert {c.component: c.verification for c in report.cells.values()} == said
