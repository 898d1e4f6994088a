"""Who is blamed, as data (app/domain/blame.py): every cause has a status, a reason and a
remedy, and every view says them; every exception of the error tree names its cause; no
cause or status is worked out of a detail's wording outside the reader of old reports.

The reports here are built by hand, in the shapes a live run makes and in those it cannot
(a non-ready cell no stage explains, a status its stages contradict, stages under way in a
finished report): every exporter renders each of them, each render bounded in time.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ecoready.domain import errors
from ecoready.domain.blame import CAUSES, COMPONENT_FAILURE, Blame, Cause, Outcome, Party, Stage, Status, said
from ecoready.domain.events import CellPlanned, RunStarted, StageFinished
from ecoready.domain.model import (
    Category,
    CellResult,
    Check,
    ComponentOrigin,
    HostFacts,
    Migration,
    Profile,
    Report,
    StageResult,
)
from ecoready.domain.state import derive_status, fold
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.probe import Probe
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.migration import Action, plan_pins, plan_steps
from ecoready.report.reasons import REASONS, REMEDIES, advice
from ecoready.report.text_grid import render_summary
from ecoready.report.troubles import infra_lines
from ecoready.report.verdict import arch_verdicts, glance
from ecoready.run import runner as runner_module
from ecoready.run.runner import Runner
from ecoready.ui.cli import main
from tests.support.fake_host import cell as fake_cell
from tests.support.fake_host import component, rig
from tests.support.fake_host import plan as fake_plan
from tests.support.reports_sample import lab_report
from tests.support.schema import REPORT_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
BOUND = 10.0  # seconds any one render may take: they take milliseconds, a loop takes forever,
# and a CI machine running engine tests beside this one has paused a render past 1 s
HOST = HostFacts("local", "amd64", ("arm64",), {"arm64": "qemu-aarch64 version 10.0.2"})

# Where each cause is met in a live run: its stage, and a detail as its producer words it.
MET: dict[Cause, tuple[Stage, str]] = {
    Cause.NOT_PUBLISHED: (Stage.IMAGE, "the index publishes amd64 only; no 1-aarch64 or 1-arm64 tag"),
    Cause.NO_SUCH_IMAGE: (Stage.IMAGE, "r.example/x:1: tag not found; the repository has 3 tags"),
    Cause.MISLABELLED_IMAGE: (Stage.IMAGE, "the index says arm64, the image's config says amd64"),
    Cause.MISLABELLED_BINARY: (Stage.AUDIT, "mariadbd (/usr/sbin/mariadbd) is built for amd64, the image says arm64"),
    Cause.NOT_FOR_THIS_CPU: (Stage.START, "exec format error (the binary is not for this CPU and no emulator ran it)"),
    Cause.DOES_NOT_START: (Stage.START, "exited with code 1: [ERROR] Aborting"),
    Cause.CHECK_FAILED: (Stage.SMOKE, "failed: crud"),
    Cause.BENCH_FAILED: (Stage.BENCH, "sysbench prepare failed"),
    Cause.OVER_BUDGET: (Stage.START, "exceeded its 90 s budget (waiting for SELECT 1)"),
    Cause.ENGINE_UNREACHABLE: (Stage.IMAGE, "host graviton: unreachable: did not answer"),
    Cause.HOST_LOST: (Stage.SMOKE, "docker daemon unavailable"),
    Cause.ENGINE_REFUSED: (Stage.START, "409 Conflict: the name is already in use"),
    Cause.ENGINE_STUCK: (Stage.START, "a docker call: the engine at unix:///x.sock sent nothing for 30 s"),
    Cause.REGISTRY: (Stage.IMAGE, "unreachable (ConnectError: name not known)"),
    Cause.MIRROR_GAP: (Stage.IMAGE, "mirror.local:5000/hub/library/mysql:8.4 is not on the mirror (tag not found)"),
    Cause.MIRROR_BEHIND: (
        Stage.IMAGE,
        "the index publishes amd64 only (as this mirror of docker.io serves it), while docker.io publishes arm64",
    ),
    Cause.MIRROR_DOWN: (Stage.IMAGE, "unreachable (connection refused) (this mirror of docker.io)"),
    Cause.CREDENTIALS: (Stage.IMAGE, "the credential helper docker-credential-pass failed"),
    Cause.PULL_STALLED: (Stage.IMAGE, "no progress for 120 s pulling r.example/x@sha256:0000"),
    Cause.BACKEND: (Stage.START, "did not start: exited with code 1"),
    Cause.TOOL_IMAGE: (Stage.BENCH, "the sysbench image r.example/sysbench:1: missing: amd64 only"),
    Cause.EMULATOR: (Stage.START, "the arm64 emulator is too old, even with QEMU_CPU=max"),
    Cause.NO_HOST: (Stage.IMAGE, "no host for arm64 (hosts serve: amd64)"),
    Cause.MATRIX: (Stage.START, "matrix row 'x' (probe command): r.example/x:1 has no program 'run'"),
    Cause.INTERRUPTED: (Stage.START, "interrupted"),
    Cause.TOOL: (Stage.START, "something of ours failed"),
    Cause.INTERNAL: (Stage.SMOKE, "internal error: KeyError: 'x'"),
    Cause.NEEDS_LOGIN: (
        Stage.IMAGE,
        "access to acme/db refused (HTTP 401): it needs a login and none is configured for r.example",
    ),
    Cause.NEEDS_LICENCE: (Stage.START, "stopped at start asking for a licence key: ERROR: a license key is required"),
    Cause.NOT_APPLICABLE: (Stage.BENCH, "no bench in this profile"),
    Cause.TWIN_FAILED: (Stage.START, "its native twin x/amd64 failed the same way at start: exceeded its 90 s budget"),
}
SUBJECTS = {
    Cause.REGISTRY: "docker.io",
    Cause.MIRROR_GAP: "mirror.local:5000/hub",
    Cause.MIRROR_BEHIND: "mirror.local:5000/hub",
    Cause.MIRROR_DOWN: "mirror.local:5000/hub",
    Cause.BACKEND: "mysql-8.4",
    Cause.CHECK_FAILED: "crud",
    Cause.TWIN_FAILED: "x/amd64",
    Cause.NEEDS_LOGIN: "r.example",
}
FIXES = {
    Cause.NO_HOST: "register qemu-aarch64 or add a native arm64 host",
    Cause.EMULATOR: "register qemu >= 8",
    Cause.NEEDS_LICENCE: "set LICENSE_KEY in the row's env",  # what to provide: the one who saw it knew
}


# -- the table itself ---------------------------------------------------------------------
def test_every_cause_leads_to_a_status_a_reason_and_a_remedy() -> None:
    assert set(CAUSES) == set(Cause) == set(MET)
    assert set(REASONS) == set(Cause) and set(REMEDIES) == set(Cause)
    assert set(COMPONENT_FAILURE) == set(Stage)
    for cause, facts in CAUSES.items():
        # nobody's: decides nothing, but a start cut short for its native twin's failure (skipped)
        assert (facts.status in (None, Status.SKIPPED)) == (facts.party is Party.NOBODY), cause
        if facts.party is Party.TOOL:
            assert facts.status is Status.ERROR, cause  # the tool's trouble is never the component's
        if facts.party is Party.COMPONENT:
            assert facts.status in (Status.MISSING, Status.BROKEN, Status.PARTIAL), cause
        # what only the user can give (a login, a licence key): locked, never broken nor error
        assert (facts.party is Party.USER) == (facts.status is Status.LOCKED), cause
    for stage, cause in COMPONENT_FAILURE.items():
        assert CAUSES[cause].party is Party.COMPONENT, stage
    schema = json.loads(Path(REPORT_SCHEMA).read_text())
    assert schema["$defs"]["cause"]["enum"] == [c.value for c in Cause]  # what a saved report may say


def error_classes() -> list[type[errors.EcoreadyError]]:
    return [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.EcoreadyError)]


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_exception_of_the_error_tree_names_who_is_blamed(cls: type[errors.EcoreadyError]) -> None:
    party = {stage: CAUSES[cls.cause or COMPONENT_FAILURE[stage]].party for stage in (Stage.START, Stage.SMOKE)}
    expected = {
        errors.LoginRequired: Party.USER,  # a RegistryError the user's login answers: before InfraError
        errors.LicenceRequired: Party.USER,
        errors.InfraError: Party.TOOL,
        errors.ComponentFailure: Party.COMPONENT,
        errors.ImageUnavailable: Party.COMPONENT,
        errors.DeadlineExceeded: Party.CLOCK,
        errors.Skip: Party.NOBODY,
    }
    for base, blamed in expected.items():
        if issubclass(cls, base):
            assert set(party.values()) == {blamed}, (cls, party)
            break
    else:
        assert set(party.values()) == {Party.TOOL}, (cls, party)  # anything else ending a stage: ours


def test_an_exception_carries_its_blame_and_says_its_cause_words() -> None:
    exc = errors.RegistryError("docker.io", "unreachable (ConnectError: x)")
    assert exc.blame(Stage.IMAGE) == Blame(Cause.REGISTRY, "docker.io")
    assert (exc.detail, str(exc)) == ("unreachable (ConnectError: x)", "docker.io: unreachable (ConnectError: x)")
    backend = errors.BackendFailed("did not start: boom", subject="mysql-8.4", behind=Cause.DOES_NOT_START)
    assert str(backend) == "backend mysql-8.4: did not start: boom"
    assert backend.blame(Stage.START) == Blame(Cause.BACKEND, "mysql-8.4", behind=Cause.DOES_NOT_START)
    missing = errors.ImageUnavailable("the index publishes amd64 only")
    assert str(missing) == "missing: the index publishes amd64 only"
    failed = errors.StageFailed("exited with code 1")
    assert failed.blame(Stage.START).cause is Cause.DOES_NOT_START
    assert failed.blame(Stage.SMOKE).cause is Cause.CHECK_FAILED
    assert errors.CheckFailed("x").blame(Stage.START).status is Status.BROKEN  # a component's, never ours
    assert errors.EmulatorTooOld("x86-64-v2", fix="register qemu").fix == "register qemu"


# -- no wording read back -------------------------------------------------------------------
# Our own details' words, tested to decide anything: what the cause (or a field) now says.
_OUR_WORDS = (
    "missing",
    "mislabelled",
    "not found",
    "no host for",
    "; fix: ",
    "backend ",
    "failed",  # a smoke check's `failed: …`, an install's `failed: why` (Packaging.install_kind)
    "built from source",  # an install's words (Packaging.install_kind)
    "tag ",  # an image found under another tag (ImageInfo.found_tag)
    "engine of ",  # a host's engine many cells failed by (Trouble, CauseFacts.shared)
    "registry ",  # a registry many cells failed by, said in a run note (Note.about)
    "docker daemon unavailable",
    "docker engine",
    "image:",
    "start:",
    "smoke:",
    "bench:",
    "audit:",
    "packaging:",
    "exec format error",
)
_WORDS = "|".join(re.escape(w) for w in _OUR_WORDS)
# a literal of those words that a text is tested against (`x.startswith("tag ")`, `"failed" in x`)
_TESTED = re.compile(
    rf"""(startswith|removeprefix|endswith|partition|split)\(\s*f?["']({_WORDS})|["']({_WORDS})[^"']*["']\s+(not\s+)?in\s"""
)
# our own fields of words tested by how they start or end, whatever with: an install's words,
# how an image was found, a run note's text (`note.startswith(collapsed)`, `event.text.startswith(f"{x}: ")`)
_WORDS_FIELD = re.compile(
    r"""(\b(found_as|install|note)|\.text)\s*\.\s*(startswith|removeprefix|removesuffix|endswith|partition)\("""
)
# Where the outside world's words are read (a kernel's, runc's, a container's log): the
# producers that turn them into causes. Anything else testing such words reads our own.
_OUTSIDE = {
    "app/probe_api/exits.py": "the kernel's `exec format error` in a stopped container's state or log",
    "app/probe_api/refusals.py": "runc's refusal to start a container",
    "probes/command.py": "the user's own container's log",
}


def reads_our_words(line: str) -> bool:
    """Whether a line of source decides something from our own words (a comment does not)."""
    return not line.lstrip().startswith("#") and bool(_TESTED.search(line) or _WORDS_FIELD.search(line))


def test_no_cause_or_status_is_read_from_a_details_wording() -> None:
    found = []
    for path in sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "probes").rglob("*.py")]):
        name = path.relative_to(ROOT).as_posix()
        if name == "app/report/legacy.py" or name in _OUTSIDE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if reads_our_words(line):
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == []


def test_each_exemption_is_still_needed() -> None:
    for name in _OUTSIDE:
        assert any(reads_our_words(line) for line in (ROOT / name).read_text().splitlines()), name


# Each wording once read back in report/ and ui/ (before their fields), as it was written:
# the guard flags every one of them if it is put back.
PUT_BACK = {
    "engine troubles grouped by their words (report/verdict.py)": [
        'if found is not None and found[0].startswith("engine of "):',
    ],
    "an install's words (report/status_words.py)": [
        'if p.install.startswith("failed"):',
        'why = p.install.removeprefix("failed").lstrip(": ")',
        'if p.install.startswith("built from source"):',
    ],
    "how an image was found (report/migration.py, ui/tui/answer.py)": [
        'if found_as.startswith("tag "):',
        'tag = found_as.removeprefix("tag ")',
        'tag = inert(found_as.removeprefix("tag "), 0)',
    ],
    "run notes de-duplicated by their start (report/text_grid.py, ui/progress.py)": [
        "if not (collapsed and note.startswith(collapsed)):  # else said above, with the way out",
        'if any(event.text.startswith(f"{what}: ") for what in self.said):',
    ],
    "a plan step's words (report/verdict.py: `use TAG`, now Step.tag)": [
        "Action.USE: f\"use the tag {step.text.removeprefix('use ')}, which publishes {arch}\",",
    ],
    "the general pattern: a literal of our words tested against a detail": [
        'if detail.startswith("missing"):',
        'if "no host for" in text:',
        'rest = text.split("; fix: ")[1]',
        'name, _, why = rest.removeprefix("backend ").partition(" ")',
        'if "exec format error" in state.error:',
        'if "failed" in cell.detail:',
        'if reason.endswith("built from source"):',
    ],
}


@pytest.mark.parametrize("what", sorted(PUT_BACK))
def test_the_guard_flags_each_wording_put_back(what: str) -> None:
    for line in PUT_BACK[what]:
        assert reads_our_words(line), line


def test_the_guard_lets_the_fields_and_words_said_pass() -> None:
    for line in (
        'text = f"missing: {detail}"',
        "if p.install_kind is InstallKind.FAILED:",
        'tag = cell.image.found_tag if cell.image else ""',
        "if note.about not in collapsed:  # else said above, with the way out",
        "if event.about in self.said:",
        "if found is not None and found[0].shared is Shared.ENGINE:",
        '# if p.install.startswith("failed"): a comment',
    ):
        assert not reads_our_words(line), line


# -- every cause, every status, every view ---------------------------------------------------
def cell_of(component: str, arch: str, stages: tuple[StageResult, ...], **changes: Any) -> CellResult:
    status, detail = derive_status(stages)
    fields: dict[str, Any] = {"status": status, "detail": detail, "seconds": 1.5, **changes}
    return CellResult(
        f"{component}/{arch}",
        component,
        component,
        Category.SERVER,
        arch,
        "local",
        arch == "arm64",
        stages=stages,
        **fields,
    )


def report_of(*cells: CellResult) -> Report:
    components = {c.component for c in cells}
    return Report(
        schema_version=1,
        run_id="a" * 32,
        tool_version="0.1.0",
        matrix="m.toml",
        profile=Profile.SMOKE,
        started_at="2026-11-27T00:00:00Z",
        finished_at="2026-11-27T00:01:00Z",
        hosts=(HOST,),
        arches=tuple(sorted({c.arch for c in cells})),
        cells={c.id: c for c in cells},
        migration=Migration(origins=tuple(ComponentOrigin(c, f"r.example/{c}:1") for c in sorted(components))),
    )


def ended(cause: Cause) -> tuple[StageResult, ...]:
    """A cell's stages as a live run ends them with this cause."""
    stage, detail = MET[cause]
    blame = Blame(cause, SUBJECTS.get(cause, ""), FIXES.get(cause, ""))
    if cause is Cause.BACKEND:
        blame = Blame(cause, "mysql-8.4", behind=Cause.REGISTRY)
    order = list(Stage)[1:]  # image, audit, start, smoke, bench (no packaging)
    crud = (Check("crud", Outcome.PASS),)  # a smoke stage that passed ran its checks
    passed = tuple(
        StageResult(s, Outcome.PASS, 0.1, "", crud if s is Stage.SMOKE else ()) for s in order[: order.index(stage)]
    )
    checks = (Check("crud", Outcome.FAIL, "ERROR 1146: no such table"),) if cause is Cause.CHECK_FAILED else ()
    return (*passed, StageResult(stage, blame.outcome, 0.2, detail, checks, blame))


def bounded(render: Callable[[], Any]) -> Any:
    """`render()`, failing the test when it takes longer than BOUND (a daemon thread: a
    render that loops forever cannot hold the test run)."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["value"] = render()
        except BaseException as exc:  # handed to the test
            out["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), f"rendering took longer than {BOUND} s (a loop?)"
    if "error" in out:
        raise out["error"]
    return out["value"]


def every_view(report: Report) -> dict[str, str]:
    """What each exporter and `ecoready plan` make of the report, each bounded in time;
    the JSON read back must be the same report."""
    views: dict[str, str] = {}
    renders: tuple[tuple[str, Callable[[Report], str]], ...] = (
        ("text", render_summary),
        ("md", markdown.render),
        ("html", html.render),
        ("junit", junit.render),
        ("json", json_report.render),
        ("plan", lambda r: "\n".join(markdown.migration(r))),
        ("verdicts", lambda r: "\n".join([*arch_verdicts(r), glance(r), *infra_lines(r)])),
    )
    for name, render in renders:
        views[name] = bounded(partial(render, report))
    again = bounded(lambda: parse_report(views["json"]))
    assert again.cells == report.cells
    jsonschema.Draft202012Validator(json.loads(Path(REPORT_SCHEMA).read_text())).validate(json.loads(views["json"]))
    ET.fromstring(views["junit"])
    return views


@pytest.mark.parametrize("emulated", [False, True], ids=["native", "emulated"])
@pytest.mark.parametrize("cause", list(Cause), ids=lambda c: c.value)
def test_each_cause_is_said_with_its_reason_and_remedy_in_every_view(cause: Cause, emulated: bool) -> None:
    arch = "arm64" if emulated else "amd64"
    cell = cell_of("comp", arch, ended(cause))
    facts = CAUSES[cause]
    assert cell.status is (facts.status or Status.READY), (cause, cell.status)
    report = report_of(cell)
    views = every_view(report)
    (stage,) = [s for s in cell.stages if s.blame is not None]
    said_detail = said(stage.blame, stage.detail)
    if facts.status is None:  # a skipped stage blames nobody: the cell is as its other stages
        assert advice(report) == []
        return
    (advised,) = advice(report)
    assert advised.reason and advised.remedy and advised.short
    assert "{" not in advised.remedy, advised.remedy  # every template filled
    if cause in FIXES:
        assert advised.remedy == FIXES[cause]  # whoever saw it knew the way out
    assert advised.reason in views["text"] and advised.remedy in views["text"]
    if facts.party is Party.NOBODY:  # a start cut short for its native twin: not run, and said why
        assert markdown.md(said_detail) in views["md"] and html.esc(said_detail) in views["html"]
        (node,) = ET.fromstring(views["junit"]).iter("skipped")
        assert said_detail in node.get("message", "")
        (step,) = plan_steps(report)
        assert step.action is Action.UNKNOWN and said_detail in step.why
        return
    assert markdown.md(advised.reason) in views["md"] and markdown.md(advised.remedy) in views["md"]
    assert html.esc(advised.reason) in views["html"] and html.esc(advised.remedy) in views["html"]
    assert markdown.md(said_detail) in views["md"] and html.esc(said_detail) in views["html"]
    case = ET.fromstring(views["junit"]).find(".//testcase")
    assert case is not None
    kind = {Party.COMPONENT: "failure", Party.CLOCK: "failure", Party.TOOL: "error", Party.USER: "skipped"}[facts.party]
    (node,) = [n for n in case if n.tag in ("failure", "error", "skipped")]
    assert node.tag == kind and f"why: {advised.reason}" in (node.text or "")
    (step,) = plan_steps(report)
    assert (step.action is Action.UNKNOWN) == (facts.party is Party.TOOL), step
    saved = json.loads(views["json"])["cells"][0]["stages"][-1]["blame"]
    assert saved["cause"] == cause.value


# The shapes a live run cannot make: a status no stage explains, stages that contradict it,
# a stage under way in a finished report, a cell never finished; with and without a detail.
IMPOSSIBLE = {
    "no stages": (),
    "every stage passed": (StageResult(Stage.IMAGE, Outcome.PASS, 0.1, ""), StageResult(Stage.START, Outcome.PASS)),
    "a stage under way": (StageResult(Stage.IMAGE, Outcome.PASS), StageResult(Stage.START, None, 0.0, "")),
    "a registry's blame": ended(Cause.REGISTRY),
    "a missing image's blame": ended(Cause.NOT_PUBLISHED),
    "a skipped stage": (StageResult(Stage.IMAGE, Outcome.SKIP, 0.0, "", (), Blame(Cause.NOT_APPLICABLE)),),
    "a failure without a blame": (StageResult(Stage.IMAGE, Outcome.FAIL, 0.0, "missing: old words"),),
    "a passed stage with a blame": (StageResult(Stage.IMAGE, Outcome.PASS, 0.0, "", (), Blame(Cause.BACKEND)),),
}


@pytest.mark.parametrize("detail", ["", "image: docker.io: unreachable; fix: x"], ids=["no detail", "old words"])
@pytest.mark.parametrize("shape", sorted(IMPOSSIBLE))
@pytest.mark.parametrize("status", list(Status), ids=lambda s: s.value)
def test_every_shape_a_saved_report_can_take_renders_in_every_view(status: Status, shape: str, detail: str) -> None:
    cell = cell_of("odd", "amd64", IMPOSSIBLE[shape], status=status, detail=detail)
    report = report_of(cell, cell_of("fine", "amd64", ended(Cause.NOT_APPLICABLE)))
    views = every_view(report)
    said_ = {a.cell_id: a for a in advice(report)}
    if status.finished and status is not Status.READY:
        advised = said_[cell.id]
        assert advised.reason and advised.short
        assert advised.remedy
        assert advised.reason in views["text"]
    else:
        assert cell.id not in said_
    assert plan_pins(report, plan_steps(report)) == []


# -- the hang: `ecoready report` of a saved report whose non-ready cell has no failed stage ----
@pytest.mark.parametrize("status", ["timeout", "error", "missing", "partial"])
@pytest.mark.parametrize("option", ["", "--md", "--html", "--junit", "--json"])
def test_a_saved_report_that_no_stage_explains_is_rendered_at_once(option: str, status: str, tmp_path: Path) -> None:
    """It passes the schema (a merged, older or hand-edited report); every format is written
    in bounded time (a `timeout` cell used to loop forever in the verdict's prefix stripping)."""
    data = json.loads(json_report.render(lab_report("lab-mixed")))
    for cell in data["cells"]:
        if cell["status"] != "ready":
            cell["status"] = status
            for stage in cell["stages"]:
                stage.update(outcome="pass", detail="", blame=None)
    jsonschema.Draft202012Validator(json.loads(Path(REPORT_SCHEMA).read_text())).validate(data)
    saved = tmp_path / "odd.json"
    saved.write_text(json.dumps(data))
    out = tmp_path / "out"
    args = ["report", str(saved), *([option, str(out)] if option else [])]
    assert bounded(lambda: main(args)) == 0
    if option:
        assert out.read_text().strip()


# -- from the exception to the stage: the runner carries the blame -----------------------------
class Raising(Probe):
    """A probe whose start ends with the exception it is given."""

    def __init__(self, ctx: ProbeContext, exc: BaseException) -> None:
        super().__init__(ctx)
        self.exc = exc

    async def start(self) -> None:
        raise self.exc


RAISED: list[tuple[BaseException, Blame]] = [
    (errors.StageFailed("exited with code 1"), Blame(Cause.DOES_NOT_START)),
    (errors.StageFailed("exec format error", cause=Cause.NOT_FOR_THIS_CPU), Blame(Cause.NOT_FOR_THIS_CPU)),
    (errors.CheckFailed("no root@'%' account"), Blame(Cause.DOES_NOT_START)),  # the component's, never ours
    (errors.SqlError("Access denied"), Blame(Cause.DOES_NOT_START)),
    (errors.EmulatorTooOld("x86-64-v2", fix="register qemu"), Blame(Cause.DOES_NOT_START, fix="register qemu")),
    (errors.ImageUnavailable("no arm64 client image"), Blame(Cause.NOT_PUBLISHED)),
    (errors.DeadlineExceeded("no answer in 5 s"), Blame(Cause.OVER_BUDGET)),
    (errors.RegistryError("docker.io", "unreachable (ConnectError)"), Blame(Cause.REGISTRY, "docker.io")),
    (errors.DockerUnavailable("the engine did not answer"), Blame(Cause.ENGINE_UNREACHABLE)),
    (errors.EngineError("409 Conflict"), Blame(Cause.ENGINE_REFUSED)),
    (errors.CredentialError("docker-credential-pass failed"), Blame(Cause.CREDENTIALS)),
    (errors.PullStalled("no progress for 120 s"), Blame(Cause.PULL_STALLED)),
    (
        errors.BackendFailed("did not start", subject="db", behind=Cause.DOES_NOT_START),
        Blame(Cause.BACKEND, "db", behind=Cause.DOES_NOT_START),
    ),
    (
        errors.EmulatorProblem("cannot run it", fix="register qemu >= 8"),
        Blame(Cause.EMULATOR, fix="register qemu >= 8"),
    ),
    (errors.MatrixMismatch("matrix row 'x': no program 'run'"), Blame(Cause.MATRIX)),
    (errors.InfraError("something of ours"), Blame(Cause.TOOL)),
    (KeyError("x"), Blame(Cause.INTERNAL)),
]


@pytest.mark.parametrize(("exc", "blame"), RAISED, ids=lambda v: type(v).__name__)
async def test_the_runner_carries_each_exceptions_blame_to_the_stage_and_the_cell(
    exc: BaseException, blame: Blame, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = rig()
    monkeypatch.setattr(runner_module, "load_probe", lambda kind: partial(Raising, exc=exc))
    cell = fake_cell(component("db", "server", "r.example/db:1"))
    await Runner(fake_plan([cell]), r.run)._cell(cell)
    (start,) = [e for e in r.events if isinstance(e, StageFinished) and e.stage is Stage.START]
    assert (start.blame, start.outcome) == (blame, blame.outcome)
    assert "{" not in start.detail and start.detail  # the bare line, never empty
    planned = CellPlanned(cell.id, "db", "db", "server", "amd64", "fake", False)
    report = fold([RunStarted("r", "t", "m.toml", Profile.SMOKE, ("amd64",), (planned,)), *r.events])
    assert report.cells[cell.id].status is blame.status
