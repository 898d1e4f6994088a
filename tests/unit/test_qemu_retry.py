"""An emulated container that dies of `Fatal glibc error: CPU does not support x86-64-v2`
(an old qemu-user: its default CPU model lacks what Oracle Linux 9 / UBI 9 binaries need,
podman#14314/#15456, docker-library/mysql#1100) is an emulator problem: the runner retries
the start once with QEMU_CPU=max in every container of the cell and says so.

The glibc message is the one printed by glibc's dl-hwcaps check (elf/dl-hwcaps.c,
`_dl_important_hwcaps` -> "Fatal glibc error: CPU does not support x86-64-v%d").
"""

from __future__ import annotations

from ecoready.domain.events import RunNote, StageFinished
from ecoready.domain.model import Category, Outcome, Stage
from ecoready.run.runner import Runner
from tests.support.fake_host import FakeContainer, backend_server, cell, component, plan, rig

GLIBC = "Fatal glibc error: CPU does not support x86-64-v2"


def old_qemu(container: FakeContainer) -> None:
    """What an emulator without x86-64-v2 does to every process of an OL9 image."""
    if container.env.get("QEMU_CPU") != "max":
        container.running = False
        container.exit_code = 127
        container.log = [GLIBC]


def stage(events: list, which: Stage) -> StageFinished:
    return next(e for e in events if isinstance(e, StageFinished) and e.stage is which)


async def test_start_is_retried_once_with_qemu_cpu_max_and_the_detail_says_why() -> None:
    r = rig()
    r.host.on_run.append(old_qemu)
    r.host.sql(lambda call: [{"ok": 1}])
    server = component("mysql-8.4", "server", "mysql:8.4")
    c = cell(server, arch="amd64", emulated=True)
    runner = Runner(plan([c]), r.run)
    await runner._cell(c)
    start = stage(r.events, Stage.START)
    assert start.outcome is Outcome.PASS, start
    assert "QEMU_CPU=max" in start.detail and "CPU does not support x86-64-v2" in start.detail
    assert "qemu-user >= 8" in start.detail
    first, second = r.host.started
    assert "QEMU_CPU" not in first.env and second.env["QEMU_CPU"] == "max"
    assert first.id in r.host.removed  # the failed attempt was cleaned up before the retry
    notes = [e.text for e in r.events if isinstance(e, RunNote)]
    assert len(notes) == 1 and "amd64 emulator is too old" in notes[0]


async def test_the_retry_covers_the_backend_too() -> None:
    r = rig()
    r.host.on_run.append(old_qemu)
    backend_server(r.host)
    r.host.execs_to(lambda c, argv: None)

    @r.host.sql
    def router(call):  # queries through the router answer once it runs
        return [{"ok": 1}] if call.via.role == "router" else None

    server = component("mysql-8.4", "server", "mysql:8.4")
    router_comp = component("router", "router", "r:8.4", category=Category.LOAD_BALANCER, backend="mysql-8.4")
    c = cell(router_comp, server, arch="amd64", emulated=True)
    ctx, probe = _ctx_probe(r, c)
    await Runner(plan([c]), r.run)._do(c, ctx, probe, Stage.START)
    roles = [(x.role, x.env.get("QEMU_CPU")) for x in r.host.started]
    assert roles == [("backend-server", None), ("backend-server", "max"), ("router", "max")]


def _ctx_probe(r, c):
    from ecoready.probe_api.context import ProbeContext
    from ecoready.run.runner import load_probe

    ctx = ProbeContext(c, r.run)
    return ctx, load_probe(c.component.probe)(ctx)


async def test_still_failing_with_qemu_cpu_max_is_an_emulator_error_not_broken() -> None:
    r = rig()

    def hopeless(container: FakeContainer) -> None:
        container.running, container.exit_code, container.log = False, 127, [GLIBC]

    r.host.on_run.append(hopeless)
    c = cell(component("mysql-8.4", "server", "mysql:8.4"), arch="amd64", emulated=True)
    await Runner(plan([c]), r.run)._cell(c)
    start = stage(r.events, Stage.START)
    assert start.outcome is Outcome.ERROR
    assert "even with QEMU_CPU=max" in start.detail and "qemu-user >= 8" in start.detail
    assert len(r.host.started) == 2  # exactly one retry


async def test_native_cells_are_not_retried_and_blame_the_host_cpu() -> None:
    r = rig()
    r.host.on_run.append(old_qemu)
    c = cell(component("mysql-8.4", "server", "mysql:8.4"), arch="amd64", emulated=False)
    await Runner(plan([c]), r.run)._cell(c)
    start = stage(r.events, Stage.START)
    assert start.outcome is Outcome.FAIL
    assert "this host's CPU does not support x86-64-v2" in start.detail
    assert len(r.host.started) == 1


async def test_other_start_failures_are_not_retried() -> None:
    r = rig()

    def crash(container: FakeContainer) -> None:
        container.running, container.exit_code, container.log = False, 1, ["[ERROR] [MY-010119] [Server] Aborting"]

    r.host.on_run.append(crash)
    c = cell(component("mysql-8.4", "server", "mysql:8.4"), arch="amd64", emulated=True)
    await Runner(plan([c]), r.run)._cell(c)
    start = stage(r.events, Stage.START)
    assert start.outcome is Outcome.FAIL and "exited with code 1" in start.detail
    assert len(r.host.started) == 1


# qemu-user's own words when the emulated program hits an instruction its CPU lacks
SIGILL = "qemu: uncaught target signal 4 (Illegal instruction) - core dumped"


def needs_more_than_neoverse_n1(container: FakeContainer) -> None:
    """A program built for a newer core (SVE, Armv8.5 RNDR, ...): illegal under N1."""
    if container.env.get("QEMU_CPU") != "max":
        container.running, container.exit_code, container.log = False, 132, [SIGILL]


async def test_emulated_arm64_cells_run_as_neoverse_n1_and_native_cells_as_they_are() -> None:
    r = rig()
    r.host.sql(lambda call: [{"ok": 1}])
    server = component("mariadb", "server", "mariadb:11.8")
    emulated, native = cell(server, arch="arm64", emulated=True), cell(server, arch="amd64", emulated=False)
    await Runner(plan([emulated, native]), r.run)._cell(emulated)
    await Runner(plan([emulated, native]), r.run)._cell(native)
    first, second = r.host.started
    assert first.env["QEMU_CPU"] == "neoverse-n1" and "QEMU_CPU" not in second.env
    assert stage(r.events, Stage.START).detail.startswith("ready in")  # no retry, nothing to say


async def test_an_illegal_instruction_under_neoverse_n1_is_retried_with_max_and_said() -> None:
    r = rig()
    r.host.on_run.append(needs_more_than_neoverse_n1)
    r.host.sql(lambda call: [{"ok": 1}])
    c = cell(component("mariadb", "server", "mariadb:11.8"), arch="arm64", emulated=True)
    await Runner(plan([c]), r.run)._cell(c)
    start = stage(r.events, Stage.START)
    assert start.outcome is Outcome.PASS, start
    assert "with QEMU_CPU=max" in start.detail and "emulated CPU (neoverse-n1) lacks an instruction" in start.detail
    assert "qemu-user >= 8" not in start.detail  # the emulator is not too old: the model was narrow
    first, second = r.host.started
    assert (first.env["QEMU_CPU"], second.env["QEMU_CPU"]) == ("neoverse-n1", "max")
    notes = [e.text for e in r.events if isinstance(e, RunNote)]
    assert len(notes) == 1 and "arm64 emulated CPU (neoverse-n1)" in notes[0]


async def test_an_illegal_instruction_with_max_too_is_the_image_s_failure() -> None:
    r = rig()

    def always(container: FakeContainer) -> None:
        container.running, container.exit_code, container.log = False, 132, [SIGILL]

    r.host.on_run.append(always)
    c = cell(component("mariadb", "server", "mariadb:11.8"), arch="arm64", emulated=True)
    await Runner(plan([c]), r.run)._cell(c)
    start = stage(r.events, Stage.START)
    assert start.outcome is Outcome.FAIL, start  # no core qemu emulates runs it: not the tool's fault
    assert "after a retry with QEMU_CPU=max" in start.detail and "illegal instruction (SIGILL)" in start.detail
    assert len(r.host.started) == 2
