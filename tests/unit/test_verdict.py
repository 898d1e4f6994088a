"""The answer at a glance, worded once (report/verdict.py) and said by every view: a
verdict line per arch, a reason and a remedy for every cell that is not ready (the lab's
gap rows), the backend blamed once, and registry failures said once per registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.events import (
    CellFinished,
    CellPlanned,
    CellStarted,
    Event,
    RunFinished,
    RunStarted,
    StageFinished,
    StageStarted,
    TagsSearched,
)
from ecoready.domain.model import ComponentOrigin, HostFacts, Profile, Report, Stage, Status, TagSearch
from ecoready.domain.state import fold
from ecoready.report import html, junit, markdown
from ecoready.report.load import load_report
from ecoready.report.reasons import advice
from ecoready.report.text_grid import render_summary
from ecoready.report.troubles import advice_to_list, infra_lines
from ecoready.report.verdict import arch_verdicts

REPORTS = Path(__file__).parents[1] / "data" / "reports"
NOT_PUBLISHED = Cause.NOT_PUBLISHED
HOST = HostFacts("local", "amd64", ("arm64",), {"arm64": "qemu-aarch64 version 10.0.2"})
LAB = "127.0.0.1:5000/lab"
EXPORTERS = {
    "summary": render_summary,
    "markdown": markdown.render,
    "html": html.render,
    "junit": junit.render,
}


def gap_run() -> Report:
    """The lab's gap rows on arm64 as the runner reports them: missing with no suffix tag,
    missing while a `-aarch64` tag publishes arm64, mislabelled; and a cell whose backend's
    registry did not answer."""
    unreachable = "docker.io: unreachable (ConnectError: name not known)"
    backend = Blame(Cause.BACKEND, "mysql-8.4", behind=Cause.REGISTRY)
    rows = {
        "gap-amd64-only": ("the index publishes amd64 only; no 1-aarch64 or 1-arm64 tag", Blame(NOT_PUBLISHED)),
        "gap-suffix-missing": ("the index publishes amd64 only", Blame(NOT_PUBLISHED)),
        "gap-mislabelled": ("the index says arm64, the image's config says amd64", Blame(Cause.MISLABELLED_IMAGE)),
        "router": (unreachable, backend),
        "router-2": (unreachable, backend),
    }
    planned = tuple(CellPlanned(f"{c}/arm64", c, c, "server", "arm64", "local", True) for c in rows)
    origins = tuple(ComponentOrigin(c, f"{LAB}/{c}:1") for c in rows)
    events: list[Event] = [RunStarted("r", "t", "lab.toml", Profile.SMOKE, ("arm64",), planned, (HOST,), origins)]
    for component, (detail, blame) in rows.items():
        cid = f"{component}/arm64"
        events += [
            CellStarted(cid, "t"),
            StageStarted(cid, Stage.IMAGE),
            StageFinished(cid, Stage.IMAGE, blame.outcome, 0.1, detail, blame),
        ]
        if blame.cause is NOT_PUBLISHED:
            found = "1-aarch64" if component == "gap-suffix-missing" else ""
            events.append(TagsSearched(cid, TagSearch(component, "arm64", f"{LAB}/{component}:1", 3, 3, found)))
        events.append(CellFinished(cid, "t", 0.1))
    return fold([*events, RunFinished("t")])


def test_reasons_and_remedies_of_the_gap_rows() -> None:
    said = {a.component: a for a in advice(gap_run())}
    assert (
        said["gap-amd64-only"].reason == "no arm64 image: the index publishes amd64 only; no 1-aarch64 or 1-arm64 tag"
    )
    assert said["gap-amd64-only"].remedy.startswith("no tag of this image publishes arm64: ask the publisher")
    assert said["gap-suffix-missing"].remedy == "use the tag 1-aarch64, which publishes arm64"
    assert said["gap-mislabelled"].short == "mislabelled image"
    assert said["gap-mislabelled"].remedy.startswith("the image is not what its index claims")
    # the backend is blamed, not the cell's own image, and the way out is the registry's
    assert said["router"].reason == "backend mysql-8.4: docker.io: unreachable (ConnectError: name not known)"
    assert said["router"].remedy.startswith("fix the backend mysql-8.4 first (check that this machine reaches")


@pytest.mark.parametrize("name", sorted(EXPORTERS))
def test_every_view_says_the_verdict_and_the_remedies(name: str) -> None:
    report = gap_run()
    text = EXPORTERS[name](report).replace("\\", "")  # Markdown escapes, undone for the check
    (verdict,) = arch_verdicts(report)
    assert verdict.startswith("arm64 (emulated with qemu-aarch64 on local): 0 of 5 components ready; blocked by ")
    assert "gap-amd64-only, gap-suffix-missing (no arm64 image), gap-mislabelled (mislabelled image)" in verdict
    assert "not checked: router, router-2 (backend mysql-8.4 failed)" in verdict
    assert verdict.split(" ", 1)[1].replace("'", "&#x27;") in text.replace("'", "&#x27;")
    assert "use the tag 1-aarch64, which publishes arm64" in text
    assert "ask the publisher for an image for arm64" in text
    # the backend's trouble is one line, not one per cell
    backend = "backend mysql-8.4: docker.io: unreachable (ConnectError: name not known): 2 cells not checked"
    assert backend in text
    if name == "summary":
        assert "router-2/arm64" not in text.split(backend)[0].split("components ready")[-1]


def test_the_lab_audit_report_blames_the_mislabelled_binary() -> None:
    report = load_report(REPORTS / "lab-audit.json")
    assert arch_verdicts(report) == [
        "amd64 (native on local): 3 of 3 components ready",
        "arm64 (emulated with qemu-aarch64 on local): 2 of 3 components ready; "
        "blocked by gap-binary-mislabelled (mislabelled binary)",
    ]
    for render in EXPORTERS.values():
        assert "use an image whose build really targets arm64" in render(report)


def test_an_offline_upstream_run_says_each_registry_once_with_the_way_out() -> None:
    report = load_report(REPORTS / "offline-upstream.json")
    lines = infra_lines(report)
    assert [line.split(":")[0] for line in lines] == [
        "registry container-registry.oracle.com",
        "registry docker.io",
    ]
    assert "4 cells not checked; way out: check that this machine reaches the registry" in lines[1]
    assert "or set a mirror for that registry (`[registry.mirrors]` in the matrix" in lines[1]
    assert "containers/lab.toml" not in "".join(lines)  # the project's test matrix helps no user's stack
    assert advice_to_list(report) == []  # no cell repeats it
    summary = render_summary(report)
    assert summary.count("registry docker.io: unreachable") == 1
    for render in (markdown.render, html.render):
        assert "4 cells not checked; way out" in render(report)


async def test_a_backend_whose_registry_does_not_answer_is_blamed_not_the_image() -> None:
    """The component's own image is local; its backend's registry is down: the cell says
    `backend mysql-8.4: docker.io: unreachable`, not `image: docker.io: unreachable`."""
    from ecoready.domain.errors import RegistryError
    from ecoready.domain.images import ImageInfo
    from ecoready.domain.model import Category, Status
    from ecoready.run.runner import Runner
    from tests.support.fake_host import FakeImages, cell, component, plan, rig

    class DownForDockerHub(FakeImages):
        async def ensure(self, reference: str, arch: str, *, for_cell: bool = True) -> ImageInfo:
            if not reference.startswith("127.0.0.1:5000/"):
                raise RegistryError("docker.io", "unreachable (ConnectError: name not known)")
            return await super().ensure(reference, arch, for_cell=for_cell)

    r = rig()
    r.run.images = DownForDockerHub()
    server = component("mysql-8.4", "server", "mysql:8.4")
    router = component("router", "router", f"{LAB}/router:8.4", category=Category.LOAD_BALANCER, backend="mysql-8.4")
    c = cell(router, server)
    await Runner(plan([c]), r.run)._cell(c)
    planned = CellPlanned(c.id, "router", "router", "load-balancer", "amd64", "fake", False)
    report = fold([RunStarted("r", "t", "m.toml", Profile.SMOKE, ("amd64",), (planned,)), *r.events])
    routed = report.cells[c.id]
    assert routed.status is Status.ERROR
    assert routed.detail == "image: backend mysql-8.4: docker.io: unreachable (ConnectError: name not known)"
    (said,) = advice(report)
    assert said.reason == "backend mysql-8.4: docker.io: unreachable (ConnectError: name not known)"


def test_the_matrix_title_heads_every_report() -> None:
    from dataclasses import replace

    report = load_report(REPORTS / "lab-mixed.json")
    assert report.title == "ecoready lab, with failures"
    assert markdown.render(report).startswith("# ecoready lab, with failures: ecoready readiness report\n")
    assert "<h1>ecoready lab, with failures: ecoready readiness report</h1>" in html.render(report)
    assert 'name="ecoready ecoready lab, with failures"' in junit.render(report)
    assert render_summary(report).startswith("ecoready lab, with failures\n")
    untitled = replace(report, title="")  # a report of an older run: the file names it
    assert markdown.render(untitled).startswith("# ecoready readiness report\n")
    assert 'name="ecoready tests/data/reports/lab-mixed.toml"' in junit.render(untitled)


@pytest.mark.parametrize("name", ["lab-mixed", "lab-audit", "lab-run"])
def test_no_view_repeats_a_status_prefix(name: str) -> None:
    report = load_report(REPORTS / f"{name}.json")
    for render in EXPORTERS.values():
        assert "missing: missing" not in render(report)


def test_cv_only_with_two_runs_or_more() -> None:
    from ecoready.domain.model import BenchRun, BenchSeries
    from ecoready.report.exporter_text import cv_text
    from ecoready.report.status_words import size_text

    run = BenchRun("oltp_read_write", "uniform", 8, 1, 100.0, 2000.0, 5.0, 0, 0, 10.0)
    one = BenchSeries("oltp_read_write", "uniform", 8, (run,), 100.0, 2000.0, 5.0, 0.0)
    assert cv_text(one) == "–"
    assert cv_text(BenchSeries("oltp_read_write", "uniform", 8, (run, run), 100.0, 2000.0, 5.0, 0.012)) == "1.2%"
    assert [size_text(n) for n in (0, 512, 1_234_567, 3 << 30)] == ["", "512 B", "1.2 MiB", "3.0 GiB"]


def test_the_plain_progress_says_a_registry_verdict_without_a_duration_or_a_repeated_prefix() -> None:
    import io

    from ecoready.domain.events import CellFinished
    from ecoready.ui.progress import PlainProgress

    report = load_report(REPORTS / "lab-mixed.json")
    out = io.StringIO()
    progress = PlainProgress(out)
    for cell_id in ("ghost/amd64", "mariadb-aria-only/amd64"):
        progress.update(CellFinished(cell_id, "t", 0.0), report)
    ghost, aria = out.getvalue().splitlines()
    assert ghost.endswith(
        "∅ ghost/amd64 missing: 127.0.0.1:5000/lab/does-not-exist:1 not found; no 1-amd64 or 1-x86_64 tag"
    )
    assert aria.endswith("◐ mariadb-aria-only/amd64 partial 3.1s: failed: crud")


def test_an_engine_that_went_away_is_said_once_for_all_its_cells() -> None:
    from dataclasses import replace

    from ecoready.domain.blame import Outcome
    from ecoready.domain.model import StageResult, Status

    base = load_report(REPORTS / "lab-run.json")
    lost = StageResult(Stage.START, Outcome.ERROR, 0.1, "docker daemon unavailable", (), Blame(Cause.HOST_LOST))
    cells = {
        k: replace(c, status=Status.ERROR, detail="start: docker daemon unavailable", stages=(lost,))
        for k, c in base.cells.items()
    }
    report = replace(base, cells=cells)
    lines = [line for line in infra_lines(report) if line.startswith("engine of ")]
    assert len(lines) == 1 and f"{len(cells)} cells not checked" in lines[0]
    assert "way out: start the docker engine" in lines[0]
    assert advice_to_list(report) == []  # no cell repeats it
    summary = render_summary(report)
    assert summary.count("way out: start the docker engine") == 1 and "what to do" not in summary


# -- one per-arch grouping: every status but ready named once, in the verdict and the exit line --
def test_every_status_but_ready_is_in_exactly_one_group() -> None:
    from ecoready.report.verdict import GROUPS

    for status in Status:
        groups = [g for g in GROUPS if status in g.statuses]
        assert len(groups) == (0 if status is Status.READY else 1), (status, groups)


def one_arch(*statuses: Status) -> Report:
    """The recorded lab run's ready amd64 cell, once per status given, as components c0,
    c1, ...: each one not ready without its stages (a report no stage explains, advised by
    its status)."""
    from dataclasses import replace

    base = load_report(REPORTS / "lab-run.json")
    (ready,) = [c for c in base.cells.values() if c.arch == "amd64"]
    cells = [
        replace(ready, id=f"c{i}/amd64", component=f"c{i}", name=f"c{i}")
        if s is Status.READY
        else replace(ready, id=f"c{i}/amd64", component=f"c{i}", name=f"c{i}", status=s, stages=(), detail="")
        for i, s in enumerate(statuses)
    ]
    return replace(base, arches=("amd64",), cells={c.id: c for c in cells})


def test_a_timed_out_cell_is_named_in_the_verdict_and_the_exit_line() -> None:
    from ecoready.report.verdict import glance

    report = one_arch(Status.TIMEOUT)
    (cell,) = report.cells.values()
    assert glance(report) == "amd64 0 of 1 ready, 1 timed out"
    (line,) = arch_verdicts(report)
    assert line.endswith(f": 0 of 1 component ready; timed out: {cell.component} (a stage timed out)")


@pytest.mark.parametrize("status", ["timeout", "error", "partial", "broken", "missing", "skipped", "pending"])
def test_each_status_that_is_not_ready_is_counted_in_one_named_group_in_both(status: str) -> None:
    from ecoready.report.verdict import GROUPS, glance

    report = one_arch(Status.READY, Status(status))
    (group,) = [g for g in GROUPS if Status(status) in g.statuses]
    assert glance(report) == f"amd64 1 of 2 ready, 1 {group.glance}"
    (line,) = arch_verdicts(report)
    odd = next(c for c in report.cells.values() if c.status is Status(status))
    if Status(status).finished:
        assert f"; {group.verdict} {odd.component} (" in line, line
    else:
        assert ": 1 of 2 components ready so far, 1 to go" in line, line


# -- a run note about a shared trouble carries it as data: said once --------------------------
def test_a_registry_note_is_left_out_where_the_trouble_is_said_already_and_kept_elsewhere() -> None:
    import io
    from dataclasses import replace

    from ecoready.domain.blame import Shared, Trouble
    from ecoready.domain.events import CellFinished, RunNote
    from ecoready.domain.model import Note
    from ecoready.ui.progress import PlainProgress

    report = load_report(REPORTS / "offline-upstream.json")
    docker_io = Trouble(Shared.REGISTRY, "docker.io")
    note = Note("registry docker.io: unreachable (ConnectError): 4 cells not checked", docker_io)
    other = Note("registry docker.io: the same words, about nothing shared")
    noted = replace(report, notes=(note, other))
    summary = render_summary(noted)
    assert f"note: {note.text}" not in summary and f"note: {other.text}" in summary
    assert note.text in markdown.render(noted)  # the report's notes list every note
    out = io.StringIO()
    progress = PlainProgress(out)
    (first,) = [c for c in report.cells.values() if c.status.value == "error" and "docker.io" in c.detail][:1]
    progress.update(CellFinished(first.id, "t", 0.0), report)
    progress.update(RunNote(note.text, docker_io), report)
    progress.update(RunNote(other.text), report)
    said = out.getvalue()
    assert f"note: {note.text}" not in said and f"note: {other.text}" in said


def test_a_registry_that_stops_many_cells_is_said_once_and_no_line_has_two_statuses() -> None:
    """Docker Hub unreachable: the headless progress says it with the first cell it stops
    and lists none of the others; the summary says it once with the count. A driver row
    that errored beside a package that is ready says each on its own line."""
    import io
    from dataclasses import replace

    from ecoready.domain.events import CellFinished
    from ecoready.domain.model import Status
    from ecoready.domain.packaging import Packaging, PackagingVerdict
    from ecoready.report.status_words import GLYPH
    from ecoready.ui.progress import PlainProgress

    base = load_report(REPORTS / "offline-upstream.json")
    errored = [c for c in base.cells.values() if "docker.io" in c.detail]
    assert len(errored) > 2
    wheel = Packaging("pypi:PyMySQL==1.*", "pypi", "PyMySQL", "1.1.1", errored[0].arch, PackagingVerdict.READY)
    driver = replace(errored[0], id="drv/" + errored[0].arch, component="drv", name="drv", packaging=wheel)
    report = replace(base, cells={**base.cells, driver.id: driver})
    out = io.StringIO()
    progress = PlainProgress(out)
    for cell_id in report.cells:
        progress.update(CellFinished(cell_id, "t", 0.0), report)
    lines = out.getvalue().splitlines()
    stopped = len(errored) + 1
    assert sum("docker.io" in line for line in lines) == 1, lines  # said once, not per cell
    assert "the summary counts them" in lines[0]
    summary = render_summary(report).splitlines()
    (once,) = [line for line in summary if "way out:" in line and "docker.io" in line]
    assert f"{stopped} cells not checked" in once
    statuses = [s.value for s in Status] + ["not asked"]
    for line in summary:  # never `⚠ error · packaging: … ready`
        said = {s for s in statuses if f" {s}" in line or line.startswith(s)}
        glyphs = {GLYPH[s] for s in Status} & set(line)
        assert not ("its package" in line and (glyphs or "error" in said)), line
    (package,) = [line for line in summary if "its package" in line]
    assert package.strip().startswith(f"{driver.id}: its package PyMySQL 1.1.1 (pypi:PyMySQL==1.*): ")
