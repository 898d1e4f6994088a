"""Parity in every view: a ready cell that differs from its reference arch stays ready and
carries its finding in the grid (its mark), the TUI detail, JSON (and the schema), Markdown,
HTML, JUnit, the arch verdict's own line, `diff` and the plan; and how its facts are
gathered: the server probe's statement and exec, the audit's package database."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

from ecoready.domain.events import FactsGathered
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import ComponentOrigin, Migration, Report, Status
from ecoready.domain.parity import ArchParity, Difference, Facet, Facts, print_of
from ecoready.domain.specs import ExecResult
from ecoready.judge.diff import diff, diff_dict, diff_lines
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.migration import plan_steps
from ecoready.report.parity_words import PARITY_MARK
from ecoready.report.status_words import EMULATED_MARK, cell_text
from ecoready.report.text_grid import render_summary
from ecoready.report.verdict import arch_verdicts
from ecoready.run.audit_stage import AuditCache, Auditor
from ecoready.ui.tui.detail import detail_renderable, plain
from ecoready.ui.tui.look import cell_label
from tests.support.fake_host import FakeContainer, Sql, component, context, rig
from tests.support.reports_sample import lab_report
from tests.support.schema import validate_report

CELL = "mariadb-10.11/arm64"
FINDING = "arm64 differs from amd64: version 11.8.3-MariaDB vs 10.11.14-MariaDB; no `online_alter_log` plugin"
DIFFERS = ArchParity(
    "amd64",
    812,
    (Facet.VERSION, Facet.PLUGINS, Facet.PACKAGES),
    (
        Difference(Facet.VERSION, "", "11.8.3-MariaDB", "10.11.14-MariaDB"),
        Difference(Facet.PLUGINS, "online_alter_log", "ACTIVE", None),
    ),
    {"version": 1, "plugins": 1},
)


def with_parity(report: Report, parity: ArchParity | None) -> Report:
    cells = dict(report.cells)
    facts = (print_of(Facts(Facet.VERSION, {"": "10.11.14-MariaDB"}, "sql")),)
    cells[CELL] = replace(cells[CELL], parity=parity, facts=facts)
    return replace(report, cells=cells)


def test_a_ready_cell_that_differs_stays_ready_and_says_so_in_every_view() -> None:
    base = lab_report("lab-run")
    assert base.cells[CELL].status is Status.READY
    report = with_parity(base, DIFFERS)
    cell = report.cells[CELL]
    assert cell.status is Status.READY
    assert cell_text(cell, 60).endswith(PARITY_MARK) and PARITY_MARK in render_summary(report)
    for width in (12, 20, 60):  # the TUI grid keeps the marks whatever it cuts
        assert cell_label(cell, width).endswith(f"{EMULATED_MARK} {PARITY_MARK}")
    (line,) = [v for v in arch_verdicts(report) if v.startswith("arm64 parity:")]
    assert line == f"arm64 parity: 1 component differs from amd64: mariadb-10.11 ({FINDING.split(': ', 1)[1]})"
    assert FINDING in markdown.render(report)
    page = html.render(report)
    assert html.esc(FINDING) in page and f'<span class=parity title="{html.esc(FINDING)}">{PARITY_MARK}</span>' in page
    xml = junit.render(report)
    assert 'name="parity"' in xml and "812 things compared with amd64" in xml
    shown = plain(detail_renderable(cell, 200), 200)
    said = "\n  ".join(FINDING.split(": ", 1)[1].split("; "))  # a facet a line, each whole
    assert (
        f"\nparity\n812 things compared with amd64 (version, plugins, packages):\narm64 differs from amd64:\n  {said}\n"
        in shown
    )
    planned = replace(report, migration=Migration(origins=(ComponentOrigin("mariadb-10.11", "lab/mariadb:10.11"),)))
    step = next(s for s in plan_steps(planned) if (s.component, s.arch) == ("mariadb-10.11", "arm64"))
    assert step.text == "ready, but differs from amd64" and FINDING in step.why
    # the JSON report carries both, validates, and reads back the same
    data = json.loads(json_report.render(report))
    validate_report(data, "parity")
    written = next(c for c in data["cells"] if c["id"] == CELL)
    assert written["parity"]["counts"] == {"version": 1, "plugins": 1}
    assert written["facts"][0]["values"] == {"": "10.11.14-MariaDB"}
    assert parse_report(json_report.render(report)).cells[CELL] == cell


def test_a_cell_compared_the_same_has_no_mark_and_no_verdict_line() -> None:
    report = with_parity(lab_report("lab-run"), ArchParity("amd64", 812, (Facet.VERSION,)))
    cell = report.cells[CELL]
    assert PARITY_MARK not in cell_text(cell, 60)
    assert not any("parity" in v for v in arch_verdicts(report))
    assert "812 things compared with amd64 (version): the same" in markdown.render(report)


def test_diff_says_a_parity_finding_that_appears_and_one_that_goes() -> None:
    same = with_parity(lab_report("lab-run"), ArchParity("amd64", 812, (Facet.VERSION,)))
    different = with_parity(lab_report("lab-run"), DIFFERS)
    appeared = diff(same, different)
    assert appeared.changed and not appeared.regressed  # readiness did not change
    assert f"parity {CELL}: now {FINDING}" in diff_lines(appeared)
    assert diff_dict(appeared)["parity_changes"] == [{"cell": CELL, "was": "", "now": FINDING}]
    assert f"parity {CELL}: no longer differs (was: {FINDING})" in diff_lines(diff(different, same))
    assert not diff(different, different).changed


# -- gathering ----------------------------------------------------------------------------
VERSION_ROW = {
    "version": "11.8.3-MariaDB",
    "comment": "Debian",
    "machine": "x86_64",
    "root_plugin": "x",
    "native": "ACTIVE",
}


def test_the_server_probe_reads_its_facts_in_the_checks_client_run_and_asks_its_version_once() -> None:
    from ecoready.probe_api import SERVER_STATEMENT
    from ecoready.probes.server import CRUD, FACTS_QUERY, ServerProbe

    r = rig(parity=True)
    ctx = context(r, component("mariadb-11.8", "server", "lab/mariadb:11.8"))
    calls: list[str] = []

    @r.host.sql
    def server(call: Sql) -> Any:
        statement = call.statement
        calls.append(statement)
        if statement == CRUD:
            return [[{"n": "2", "updated": "1"}], [{"n": "0"}]]
        if statement.startswith(FACTS_QUERY):
            return [
                [VERSION_ROW],
                [{"name": "InnoDB", "value": "DEFAULT"}],
                [{"name": "online_alter_log", "value": "ACTIVE"}],
                [{"name": "utf8mb4", "value": None}],
                [{"name": "utf8mb4_general_ci", "value": None}],
                [{"Variable_name": "datadir", "Value": "/var/lib/mysql/"}, {"Variable_name": "port", "Value": "3306"}],
            ]
        return [{"ok": 1}]

    @r.host.execs_to
    def version(container: FakeContainer, argv: list[str]) -> ExecResult | None:
        if argv[:2] == ["sh", "-c"] and "--version" in argv[2]:
            return ExecResult(0, "mariadbd\nmariadbd  Ver 11.8.3-MariaDB on x86_64\n", "", 0.1)
        return None

    async def go() -> None:
        probe = ServerProbe(ctx)
        await probe.start()
        calls.clear()
        await probe.smoke()

    asyncio.run(go())
    assert calls == [CRUD, f"{FACTS_QUERY}; {SERVER_STATEMENT}"]  # the checks' two client runs, no third
    assert all(c.outcome.value == "pass" for c in r.checks().values())
    (event,) = [e for e in r.events if isinstance(e, FactsGathered)]
    got = {f.facet: dict(f.items) for f in event.facts}
    assert got[Facet.VERSION] == {"": "11.8.3-MariaDB"} and got[Facet.PLUGINS] == {"online_alter_log": "ACTIVE"}
    assert got[Facet.CHARSETS] == {"utf8mb4": ""}
    assert got[Facet.VARIABLES] == {"port": "3306"}  # datadir is a path: left out
    assert got[Facet.PROGRAMS] == {"mariadbd": "mariadbd Ver 11.8.3-MariaDB on <arch>"}


def test_without_parity_the_probe_gathers_nothing() -> None:
    from ecoready.probes.server import FACTS_QUERY, ServerProbe

    r = rig(parity=False)
    ctx = context(r, component("mariadb-11.8", "server", "lab/mariadb:11.8"))
    seen: list[str] = []

    @r.host.sql
    def server(call: Sql) -> Any:
        seen.append(call.statement)
        return [[{"n": "2", "updated": "1"}], [{"n": "0"}]] if len(seen) == 1 else [VERSION_ROW]

    async def go() -> None:
        probe = ServerProbe(ctx)
        await probe.start()
        await probe.smoke()

    asyncio.run(go())
    assert seen[-1] == FACTS_QUERY and not any(isinstance(e, FactsGathered) for e in r.events)


def test_the_audit_reads_the_package_database_with_the_programs(tmp_path: object) -> None:
    from pathlib import Path

    r = rig(parity=True)
    r.host.images.readable["/var/lib/dpkg/status"] = (
        b"Package: mariadb-server\nStatus: install ok installed\nVersion: 1:11.8.3-1\n"
    )
    image = ImageInfo("lab/mariadb:11.8", "amd64", digest="sha256:" + "c" * 64, image_id="sha256:" + "d" * 64)
    for parity in (True, False):
        events: list[object] = []
        auditor = Auditor(events.append, AuditCache(Path(str(tmp_path))), parity=parity)
        asyncio.run(auditor.audit(r.run, "db/amd64", "fake", image, (("mariadbd",),)))
        gathered = [e for e in events if isinstance(e, FactsGathered)]
        if parity:
            (event,) = gathered
            (packages,) = [f for f in event.facts if f.facet is Facet.PACKAGES]
            assert packages.source == "dpkg" and dict(packages.items) == {"mariadb-server": "1:11.8.3-1"}
        else:
            assert gathered == []
    asked = [path for _image, path in r.host.images.read]
    assert asked.count("/var/lib/dpkg/status") == 1  # the run without parity never asked for it


def test_a_version_exec_that_fails_leaves_the_checks_alone() -> None:
    from ecoready.domain.errors import EngineError
    from ecoready.probes.server import CRUD, ServerProbe

    r = rig(parity=True)
    ctx = context(r, component("mariadb-11.8", "server", "lab/mariadb:11.8"))

    @r.host.sql
    def server(call: Sql) -> Any:
        return [[{"n": "2", "updated": "1"}], [{"n": "0"}]] if call.statement == CRUD else [[VERSION_ROW]]

    @r.host.execs_to
    def version(container: FakeContainer, argv: list[str]) -> ExecResult | None:
        if argv[:2] == ["sh", "-c"] and "--version" in argv[2]:
            raise EngineError("the engine refused the exec")
        return None

    async def go() -> None:
        probe = ServerProbe(ctx)
        await probe.start()
        await probe.smoke()

    asyncio.run(go())
    assert {c.outcome.value for c in r.checks().values()} == {"pass"}
    (event,) = [e for e in r.events if isinstance(e, FactsGathered)]
    assert {f.facet for f in event.facts} == {Facet.VERSION, Facet.VERSION_COMMENT}  # no other result set came
