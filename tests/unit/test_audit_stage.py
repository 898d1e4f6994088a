"""The build audit stage around the parsing: which cells get it, where programs are looked
for, the cache by digest, the findings crossed with a platform that arrives later, a
mislabelled binary failing the stage, and how the reducer keeps it all."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest

from ecoready.audit.locate import candidates, search_dirs
from ecoready.domain.cpus import Fit, Target
from ecoready.domain.errors import DeadlineExceeded, MislabelledBinary, Skip
from ecoready.domain.events import (
    AuditReported,
    CellFinished,
    CellPlanned,
    CellStarted,
    Event,
    RunStarted,
    StageFinished,
    StageStarted,
)
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import (
    AuditResult,
    BinaryAudit,
    HostFacts,
    Outcome,
    PlatformFitness,
    Profile,
    Severity,
    Stage,
    Status,
)
from ecoready.domain.state import fold
from ecoready.matrix.kinds import KINDS
from ecoready.matrix.load import parse
from ecoready.plan.cells import AUDIT_BUDGET_S, make_plan
from ecoready.probe_api.run_context import RunContext
from tests.support.fake_host import FakeHostImages, rig

ARM_SERVER = BinaryAudit("mariadbd", "/usr/sbin/mariadbd", "arm64", 100, 65536, lse="outline", lse_count=3)
AMD_SERVER = BinaryAudit("mariadbd", "/usr/sbin/mariadbd", "amd64", 100, 4096, x86_needs="x86-64")
IMAGE = ImageInfo("lab/mariadb:10.11", "arm64", digest="sha256:" + "a" * 64, image_id="sha256:" + "b" * 64)
SERVER_PROGRAMS = KINDS["server"].programs


def test_cells_of_kinds_with_programs_get_an_audit_after_the_image_stage() -> None:
    matrix = parse(
        'arches = ["amd64", "arm64"]\n'
        '[[components]]\nid="db"\ncategory="server"\nprobe="server"\nimage="x/db:1"\n'
        '[[components]]\nid="pt"\ncategory="toolkit"\nprobe="toolkit"\nimage="x/pt:1"\nbackend="db"\n',
        "m.toml",
    )
    plan = make_plan(matrix, [HostFacts("local", "amd64", emulated_arches=("arm64",))])
    stages = {c.id: c.stages for c in plan.cells}
    assert stages["db/amd64"] == (Stage.IMAGE, Stage.AUDIT, Stage.START, Stage.SMOKE, Stage.BENCH)
    assert stages["pt/arm64"] == (Stage.IMAGE, Stage.START, Stage.SMOKE)  # percona-toolkit is Perl
    emulated = next(c for c in plan.cells if c.id == "db/arm64")
    assert emulated.budgets[Stage.AUDIT] == AUDIT_BUDGET_S  # nothing runs emulated: not scaled


def test_the_kinds_the_audit_covers_declare_their_main_programs() -> None:
    declared = {name: kind.programs for name, kind in KINDS.items() if kind.programs}
    assert declared["server"] == (("mariadbd", "mysqld"),)
    assert declared["group-replication"] == (("mysqld",),)  # MySQL 9.7 in the lab
    assert declared["router"] == (("mysqlrouter",),)
    assert declared["mariabackup"] == (("mariadb-backup", "mariabackup"),)
    assert declared["mydumper"] == (("mydumper",), ("myloader",))
    assert {"proxysql", "maxscale", "xtrabackup", "shell", "galera", "pxc", "replication"} <= set(declared)
    assert not KINDS["toolkit"].programs and not KINDS["connector"].programs


def test_programs_are_looked_for_along_the_image_path_then_the_sbin_folders() -> None:
    dirs = search_dirs(["LANG=C", "PATH=/opt/bin:/usr/bin:relative:/usr/bin/"])
    assert dirs[:2] == ("/opt/bin", "/usr/bin")
    assert "/usr/sbin" in dirs and "relative" not in dirs
    assert search_dirs([])[:3] == ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin")
    assert candidates(("mariadbd", "mysqld"), ("/usr/sbin", "/bin")) == [
        "/usr/sbin/mariadbd",
        "/bin/mariadbd",
        "/usr/sbin/mysqld",
        "/bin/mysqld",
    ]


# -- the cache --------------------------------------------------------------------------
def test_the_cache_gives_back_what_it_kept_for_the_same_key_only(tmp_path: Path) -> None:
    from ecoready.run.audit_stage import AuditCache, cache_key

    cache = AuditCache(tmp_path)
    key = cache_key(IMAGE.digest, "arm64", SERVER_PROGRAMS)
    audit = AuditResult("arm64", IMAGE.digest, (ARM_SERVER,), seconds=1.5)
    cache.put(key, audit)
    assert cache.get(key) == audit
    assert cache.get(cache_key(IMAGE.digest, "amd64", SERVER_PROGRAMS)) is None
    assert cache.get(cache_key(IMAGE.digest, "arm64", (("mysqld",),))) is None
    for path in tmp_path.iterdir():
        path.write_text('{"key": "' + key + '", "audit": {"arch": 3}}')
    assert cache.get(key) is None  # unreadable: a miss, never an error


def test_a_cache_that_cannot_be_written_turns_itself_off(tmp_path: Path) -> None:
    from ecoready.run.audit_stage import AuditCache

    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = AuditCache(blocker / "audit")
    cache.put("k", AuditResult("arm64", "d"))
    assert cache.root is None and cache.get("k") is None


# -- the auditor: cached audits need no engine ------------------------------------------
def auditor_with(tmp_path: Path, image: ImageInfo, *binaries: BinaryAudit, targets: tuple[Target, ...] = ()):
    from ecoready.run.audit_stage import AuditCache, Auditor, cache_key

    events: list[Event] = []
    cache = AuditCache(tmp_path)
    cache.put(cache_key(image.digest, image.arch, SERVER_PROGRAMS), AuditResult(image.arch, image.digest, binaries))
    return Auditor(events.append, cache, targets), events


NO_ENGINE = cast(RunContext, None)  # a cached audit reads nothing: any engine call would fail


def test_findings_are_crossed_with_the_platform_when_it_arrives_after_the_audit(tmp_path: Path) -> None:
    auditor, events = auditor_with(tmp_path, IMAGE, ARM_SERVER)
    detail = asyncio.run(auditor.audit(NO_ENGINE, "db/arm64", "local", IMAGE, SERVER_PROGRAMS))
    assert detail == "mariadbd: arm64, LSE at run time, 64 KiB segments (cached)"
    first = cast(AuditReported, events[-1]).audit
    assert first.cached and first.platform == ""
    assert "fast on ARMv8.1+ CPUs" in first.findings[0].text
    platform = PlatformFitness("local", "arm64", True, machine="aarch64", features=("lse",))
    auditor.observe(replace(platform, arch="amd64"))  # another arch: nothing to cross
    assert len(events) == 1
    auditor.observe(platform)
    crossed = cast(AuditReported, events[-1]).audit
    assert crossed.platform == "local/arm64"
    assert crossed.findings[0].text.endswith("this qemu CPU has LSE: it uses them")
    assert crossed.binaries == first.binaries
    auditor.forget("db/arm64")  # the cell starts again: its old audit is not reported
    auditor.observe(platform)
    assert len(events) == 2


def test_each_audit_is_answered_for_the_matrix_targets(tmp_path: Path) -> None:
    targets = (Target("aws:m6g.large", "graviton2"), Target("rpi4", "rpi4"), Target("zen4", "zen4"))
    inline = replace(ARM_SERVER, lse="inline")
    auditor, events = auditor_with(tmp_path, IMAGE, inline, targets=targets)
    asyncio.run(auditor.audit(NO_ENGINE, "db/arm64", "local", IMAGE, SERVER_PROGRAMS))
    (program,) = cast(AuditReported, events[-1]).audit.targets
    assert program.program == "mariadbd"
    assert [(t.target, t.fit, [lack.code for lack in t.lacks]) for t in program.targets] == [
        ("aws:m6g.large", Fit.RUNS, []),
        ("rpi4", Fit.NOT, ["lse"]),  # an amd64 target says nothing of an arm64 program
    ]


def test_a_platform_known_before_the_audit_is_used_at_once(tmp_path: Path) -> None:
    auditor, events = auditor_with(tmp_path, IMAGE, ARM_SERVER)
    auditor.observe(PlatformFitness("local", "arm64", False, machine="aarch64", missing=("lse",)))
    asyncio.run(auditor.audit(NO_ENGINE, "db/arm64", "local", IMAGE, SERVER_PROGRAMS))
    finding = cast(AuditReported, events[-1]).audit.findings[0]
    assert finding.severity is Severity.HAZARD and "lacks them" in finding.text


def test_a_binary_of_another_arch_fails_the_stage_after_reporting_the_audit(tmp_path: Path) -> None:
    auditor, events = auditor_with(tmp_path, IMAGE, AMD_SERVER)
    with pytest.raises(MislabelledBinary) as failed:
        asyncio.run(auditor.audit(NO_ENGINE, "gap/arm64", "local", IMAGE, SERVER_PROGRAMS))
    assert str(failed.value) == (
        "mislabelled binary: mariadbd (/usr/sbin/mariadbd) is built for amd64, the image says arm64"
    )
    assert cast(AuditReported, events[-1]).audit.findings[0].code == "mislabelled"


class SlowImages(FakeHostImages):
    """An engine that never hands the files over in time."""

    async def image_env(self, image: str) -> list[str]:
        raise DeadlineExceeded("docker call did not return within 35 s")


def test_programs_the_engine_will_not_hand_over_skip_the_audit_not_the_cell(tmp_path: Path) -> None:
    from ecoready.run.audit_stage import AuditCache, Auditor

    events: list[Event] = []
    slow = rig()
    slow.host.images = SlowImages()
    auditor = Auditor(events.append, AuditCache(tmp_path))
    with pytest.raises(Skip) as skipped:
        asyncio.run(auditor.audit(slow.run, "db/arm64", "local", IMAGE, SERVER_PROGRAMS))
    assert str(skipped.value) == "the programs could not be read: docker call did not return within 35 s"
    assert events == []


# -- the reducer --------------------------------------------------------------------------
def started(cell: str) -> RunStarted:
    component, arch = cell.split("/")
    planned = CellPlanned(cell, component, component, "server", arch, "local", arch == "arm64")
    return RunStarted("run1", "2026-01-01T00:00:00Z", "m.toml", Profile.SMOKE, ("amd64", "arm64"), (planned,))


def audit_events(cell: str, outcome: Outcome, detail: str) -> list[Event]:
    audit = AuditResult("arm64", IMAGE.digest, (ARM_SERVER,))
    return [
        CellStarted(cell, "t"),
        StageStarted(cell, Stage.IMAGE),
        StageFinished(cell, Stage.IMAGE, Outcome.PASS, 1.0),
        StageStarted(cell, Stage.AUDIT),
        AuditReported(cell, audit),
        StageFinished(cell, Stage.AUDIT, outcome, 0.5, detail),
    ]


def test_a_failed_audit_is_a_broken_cell_and_the_audit_is_kept() -> None:
    detail = "mariadbd (/usr/sbin/mariadbd) is built for amd64, the image says arm64"
    report = fold(
        [started("gap/arm64"), *audit_events("gap/arm64", Outcome.FAIL, detail), CellFinished("gap/arm64", "t", 2)]
    )
    cell = report.cells["gap/arm64"]
    assert (cell.status, cell.detail) == (Status.BROKEN, f"mislabelled binary: {detail}")
    assert cell.audit is not None and cell.audit.binaries == (ARM_SERVER,)


def test_a_passed_audit_leaves_the_cell_to_its_other_stages_and_a_rerun_clears_it() -> None:
    events = [
        started("db/arm64"),
        *audit_events("db/arm64", Outcome.PASS, "mariadbd: arm64"),
        StageStarted("db/arm64", Stage.START),
        StageFinished("db/arm64", Stage.START, Outcome.FAIL, 1.0, "exec format error"),
        CellFinished("db/arm64", "t", 3),
    ]
    cell = fold(events).cells["db/arm64"]
    assert (cell.status, cell.detail) == (Status.BROKEN, "exec format error")
    assert fold([*events, CellStarted("db/arm64", "t2")]).cells["db/arm64"].audit is None
