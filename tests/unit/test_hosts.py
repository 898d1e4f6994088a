"""Several Docker hosts: [[hosts]] keys, which host the plan picks, the runner routing each
cell to its host's context with that host's limit, a lost host failing fast, and the
report and summary naming the host of each cell."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.errors import ConfigError, DockerUnavailable
from ecoready.domain.events import CellPlanned, Event, HostLost, PlatformObserved, RunStarted, StageFinished
from ecoready.domain.model import Hazard, Host, HostFacts, Outcome, PlatformFitness, Profile, Report, Stage, TlsFiles
from ecoready.domain.state import empty_report, fold, reduce
from ecoready.matrix.load import parse
from ecoready.plan.cells import CellPlan, make_plan
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.text_grid import column_title, render_summary
from ecoready.run.hosts import Engine, emulation_wanted, unreachable_facts
from ecoready.run.runner import Runner
from tests.support.fake_host import FakeHost, cell, component, plan, rig

COMPONENTS = '[[components]]\nid="db"\ncategory="server"\nprobe="server"\nimage="x/db:1"\n'


def problems(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(ConfigError) as info:
        parse(text + COMPONENTS, "m.toml")
    return [(p.line, p.col, p.message) for p in info.value.problems]


# -- [[hosts]] --------------------------------------------------------------------------
def test_hosts_keys_parse_with_tls_paths_from_the_matrix_folder(tmp_path: Path) -> None:
    matrix = parse(
        '[[hosts]]\nname = "x86"\nprice_per_hour = 0.192\ncpu_ghz = 3.1\nconcurrency = 3\n'
        '[[hosts]]\nname = "graviton"\ndocker = "tcp://10.0.0.5:2376"\ntls_dir = "certs/graviton"\n'
        'arches = ["aarch64"]\nemulate = false\n'
        '[[hosts]]\nname = "kunpeng"\ndocker = "ssh://ops@kunpeng.example:2222"\n'
        '[[hosts]]\nname = "files"\ndocker = "tcp://h:2376"\ntls_ca = "/etc/c/ca.pem"\n'
        'tls_cert = "c.pem"\ntls_key = "~/k.pem"\n' + COMPONENTS,
        str(tmp_path / "m.toml"),
    )
    x86, graviton, kunpeng, files = matrix.hosts
    assert (x86.docker, x86.concurrency, x86.price_per_hour, x86.tls) == ("", 3, 0.192, None)
    assert graviton.arches == ("arm64",) and graviton.emulate is False
    assert graviton.tls == TlsFiles(*(str(tmp_path / "certs/graviton" / f) for f in ("ca.pem", "cert.pem", "key.pem")))
    assert kunpeng.docker == "ssh://ops@kunpeng.example:2222" and kunpeng.tls is None
    assert files.tls == TlsFiles("/etc/c/ca.pem", str(tmp_path / "c.pem"), str(Path("~/k.pem").expanduser()))


@pytest.mark.parametrize(
    ("text", "line", "col", "words"),
    [
        ('[[hosts]]\nname = "a"\ndocker = "ssh://h"\ntls_dir = "c"\n', 4, 1, "'hosts[0].tls_dir' needs docker"),
        ('[[hosts]]\nname = "a"\ndocker = "tcp://h:1"\ntls_cert = "c"\n', 4, 1, "needs tls_ca, tls_key too"),
        (
            '[[hosts]]\nname = "a"\ndocker = "tcp://h:1"\ntls_dir = "d"\ntls_key = "k"\n',
            5,
            11,
            "give tls_dir or the three tls_* files",
        ),
        ('[[hosts]]\nname = "a"\ndocker = "ssh://h/path"\n', 3, 10, "must be unix:///path, tcp://host:port or ssh"),
        ('[[hosts]]\nname = "a"\nconcurrency = 0\n', 3, 15, "'hosts[0].concurrency' must be between 1 and 256"),
        ('[[hosts]]\nname = "a"\ntls_dri = "d"\n', 3, 1, "unknown key 'hosts[0].tls_dri' (did you mean 'tls_dir'?)"),
    ],
)
def test_host_key_errors_name_line_column_and_key(text: str, line: int, col: int, words: str) -> None:
    found = problems(text)
    match = next((p for p in found if words in p[2]), None)
    assert match is not None, found
    assert match[:2] == (line, col), found


# -- what each host serves, and the plan -----------------------------------------------
MATRIX = parse('arches = ["amd64", "arm64"]\n' + COMPONENTS, "m.toml")


def test_emulation_is_asked_for_listed_or_all_other_wanted_arches() -> None:
    wanted = ("amd64", "arm64")
    assert emulation_wanted(Host("a"), "amd64", wanted) == ["arm64"]
    assert emulation_wanted(Host("a", emulate=False), "amd64", wanted) == []
    assert emulation_wanted(Host("a", arches=("arm64",), emulate=False), "amd64", wanted) == ["arm64"]
    assert emulation_wanted(Host("a", arches=("amd64",)), "amd64", wanted) == []


def test_each_arch_goes_to_its_native_host_across_several() -> None:
    hosts = [
        HostFacts("x86", "amd64", emulated_arches=("arm64",)),
        HostFacts("graviton", "arm64", emulated_arches=("amd64",)),
    ]
    cells = make_plan(MATRIX, hosts).cells
    assert {c.arch: (c.host, c.emulated) for c in cells} == {"amd64": ("x86", False), "arm64": ("graviton", False)}


def test_a_host_restricted_by_arches_serves_only_those() -> None:
    # the second engine of the tests: native amd64, told to run arm64 only (emulated)
    local = HostFacts("local", "amd64", serves=("amd64",))
    second = HostFacts("second", "amd64", emulated_arches=("arm64",), serves=("arm64",))
    cells = make_plan(MATRIX, [local, second]).cells
    assert {c.arch: (c.host, c.emulated) for c in cells} == {"amd64": ("local", False), "arm64": ("second", True)}
    vice = [HostFacts("local", "amd64", emulated_arches=("arm64",), serves=("arm64",)), second]
    vice[1] = HostFacts("second", "amd64", serves=("amd64",))
    cells = make_plan(MATRIX, vice).cells
    assert {c.arch: (c.host, c.emulated) for c in cells} == {"amd64": ("second", False), "arm64": ("local", True)}


def test_a_native_host_that_cannot_be_reached_is_not_replaced_by_emulation() -> None:
    down = unreachable_facts(Engine(Host("graviton", docker="ssh://g", arches=("arm64",)), error="did not answer"))
    local = HostFacts("local", "amd64", emulated_arches=("arm64",))
    amd, arm = make_plan(MATRIX, [local, down]).cells
    assert (amd.host, amd.unrunnable) == ("local", None)
    assert arm.host == "graviton" and arm.unrunnable is not None
    assert arm.unrunnable.detail == "host graviton: unreachable: did not answer"
    assert arm.unrunnable.blame.cause is Cause.ENGINE_UNREACHABLE and arm.unrunnable.blame.subject == "graviton"


def test_an_unreachable_host_without_arches_is_named_when_nothing_serves_the_arch() -> None:
    down = unreachable_facts(Engine(Host("graviton", docker="ssh://g"), error="refused"))
    (arm,) = make_plan(MATRIX, [HostFacts("local", "amd64"), down], arches=["arm64"]).cells
    assert arm.unrunnable is not None and arm.unrunnable.detail.startswith("no host for arm64")
    assert (
        "host graviton: unreachable: refused" in arm.unrunnable.detail and arm.unrunnable.blame.cause is Cause.NO_HOST
    )


# -- the runner: routing, limits, a lost host --------------------------------------------
class Engine2(FakeHost):
    """A FakeHost with a name, and a ping that can say the engine is gone."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.up = True
        self.running_now = 0
        self.most_at_once = 0

    async def ping(self, timeout: float = 5.0) -> bool:
        return self.up


def two_host_runner(limit_b: int = 1) -> tuple[Runner, Engine2, Engine2, list[Event]]:
    a, b = rig(), rig()
    host_a, host_b = Engine2("a"), Engine2("b")
    a.run.host, b.run.host = host_a, host_b
    b.run.emit = a.run.emit  # one event stream
    cells = []
    for i in range(3):
        comp = component(f"db{i}", "server", "x/db:1")
        cells.append(replace(cell(comp, arch="amd64"), host="a"))
        cells.append(replace(cell(comp, arch="arm64", emulated=True), host="b"))
    runner = Runner(plan(cells), a.run, hosts={"a": a.run, "b": b.run}, limits={"a": 2, "b": limit_b})
    return runner, host_a, host_b, a.events


def test_each_cell_runs_on_its_plans_host() -> None:
    runner, host_a, host_b, _events = two_host_runner()
    assert runner.context_for(runner.plan.cells[0]).host is host_a
    assert runner.context_for(runner.plan.cells[1]).host is host_b
    unknown = replace(runner.plan.cells[0], host="elsewhere")
    assert runner.context_for(unknown) is runner.run  # the default host's context


async def test_each_host_has_its_own_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    runner, _host_a, _host_b, _events = two_host_runner(limit_b=1)
    seen: dict[str, int] = {"a": 0, "b": 0}
    most: dict[str, int] = {"a": 0, "b": 0}

    async def fake_stage(c: CellPlan, ctx: object, probe: object, stage: Stage) -> Outcome:
        if stage is Stage.IMAGE:  # pulls run outside the slots
            return Outcome.PASS
        name = c.host
        seen[name] += 1
        most[name] = max(most[name], seen[name])
        await asyncio.sleep(0.01)
        seen[name] -= 1
        return Outcome.PASS

    monkeypatch.setattr(runner, "_stage", fake_stage)
    await asyncio.gather(*(runner.run_cell(c) for c in runner.plan.cells))
    assert most == {"a": 2, "b": 1}


async def test_a_lost_host_fails_its_waiting_cells_at_once_and_only_its_own() -> None:
    runner, _host_a, host_b, events = two_host_runner()
    host_b.up = False
    assert await runner.host_lost(runner.hosts["b"])
    assert await runner.host_lost(runner.hosts["b"])  # said once
    assert [e for e in events if isinstance(e, HostLost)] == [HostLost("b", "docker daemon unavailable")]
    arm = runner.plan.cells[1]
    await runner._cell(arm)
    finished = [e for e in events if isinstance(e, StageFinished) and e.cell_id == arm.id]
    detail = "docker daemon unavailable (host b was lost mid-run)"
    assert finished == [StageFinished(arm.id, Stage.IMAGE, Outcome.ERROR, 0.0, detail, Blame(Cause.HOST_LOST, "b"))]
    assert host_b.started == []  # nothing was asked of the lost engine
    assert not await runner.host_lost(runner.hosts["a"])


async def test_an_engine_error_marks_the_host_lost_only_when_it_stops_answering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runner, _host_a, host_b, events = two_host_runner()

    async def gone(*args: object, **kwargs: object) -> str:
        host_b.up = False
        raise DockerUnavailable("docker daemon unavailable")

    monkeypatch.setattr(host_b, "create_network", gone)
    await runner._cell(runner.plan.cells[1])
    start = next(e for e in events if isinstance(e, StageFinished) and e.stage is Stage.START)
    assert (start.outcome, start.detail) == (Outcome.ERROR, "docker daemon unavailable")
    assert any(isinstance(e, HostLost) and e.host == "b" for e in events)


# -- the report and the summary -----------------------------------------------------------
def two_host_report() -> Report:
    hosts = (
        HostFacts("x86", "amd64", serves=("amd64",), docker=""),
        HostFacts("graviton", "arm64", serves=("arm64",), docker="ssh://ops@graviton:22", price_per_hour=0.1),
    )
    planned = tuple(
        CellPlanned(f"db/{arch}", "db", "db", "server", arch, host, False)
        for arch, host in (("amd64", "x86"), ("arm64", "graviton"))
    )
    fitness = PlatformFitness(
        "graviton", "arm64", False, machine="aarch64", page_size=65536, hazards=(Hazard("page-64k", "64 KiB pages"),)
    )
    return fold(
        [
            RunStarted("a" * 32, "2026-01-01T00:00:00Z", "m.toml", Profile.SMOKE, ("amd64", "arm64"), planned, hosts),
            PlatformObserved(fitness),
            HostLost("graviton", "docker daemon unavailable"),
        ]
    )


def test_platforms_and_lost_hosts_are_folded_into_the_report() -> None:
    report = two_host_report()
    assert [(p.host, p.arch) for p in report.platforms] == [("graviton", "arm64")]
    again = reduce(report, PlatformObserved(PlatformFitness("graviton", "arm64", False, cpus=4)))
    assert [p.cpus for p in again.platforms] == [4]
    graviton = {h.name: h for h in report.hosts}["graviton"]
    assert graviton.error == "lost mid-run: docker daemon unavailable"


def test_the_json_report_keeps_hosts_and_platforms() -> None:
    report = two_host_report()
    back = parse_report(json_report.render(report))
    assert back.hosts == report.hosts and back.platforms == report.platforms


def test_the_summary_names_the_host_of_each_column_when_several_ran() -> None:
    report = two_host_report()
    assert column_title(report, "arm64") == "arm64 @ graviton"
    text = render_summary(report)
    assert "amd64 @ x86" in text and "host graviton: 1 cell: lost mid-run" in text
    single = reduce(empty_report(), RunStarted("r", "t", "m", Profile.SMOKE, ("amd64",), (), ()))
    assert column_title(single, "amd64") == "amd64"


def test_merged_reports_keep_each_runners_platforms_under_its_host() -> None:
    from ecoready.report.merge import merge

    def runner(arch: str, run_id: str) -> Report:
        planned = (CellPlanned(f"db/{arch}", "db", "db", "server", arch, "local", False),)
        host = HostFacts("local", arch, serves=(arch,))
        return fold(
            [
                RunStarted(run_id, "2026-01-01T00:00:00Z", "m.toml", Profile.SMOKE, (arch,), planned, (host,)),
                PlatformObserved(PlatformFitness("local", arch, False, machine=arch)),
            ]
        )

    merged = merge([("amd.json", runner("amd64", "1" * 32)), ("arm.json", runner("arm64", "2" * 32))])
    assert [(p.host, p.arch) for p in merged.platforms] == [("local-amd64", "amd64"), ("local-arm64", "arm64")]
    assert {c.host: c.arch for c in merged.cells.values()} == {"local-amd64": "amd64", "local-arm64": "arm64"}
    backwards = merge([("arm.json", runner("arm64", "2" * 32)), ("amd.json", runner("amd64", "1" * 32))])
    assert {h.name: h.native_arch for h in backwards.hosts} == {"local-arm64": "arm64", "local-amd64": "amd64"}


def test_the_summary_grid_has_a_platform_row_group() -> None:
    report = two_host_report()
    text = render_summary(report)
    lines = text.splitlines()
    group = lines.index("[platform]")
    assert lines[group + 1].split()[:2] == ["graviton", "⚠"]  # 64 KiB pages: a hazard
    assert "aarch64" in lines[group + 1] and "64K" in lines[group + 1]


def test_markdown_and_html_have_a_platform_section_with_inert_container_text() -> None:
    from ecoready.report import html, markdown

    report = two_host_report()
    hostile = PlatformFitness("x86", "amd64", False, machine="x86_64", cpu_model="<script>x</script> | [a](b)")
    report = reduce(report, PlatformObserved(hostile))
    md = markdown.render(report)
    assert "## Platform fitness" in md and "- graviton/arm64: 64 KiB pages" in md
    assert "<script>" not in md and "\\| \\[a\\](b)" in md
    page = html.render(report)
    assert "<h2>Platform fitness</h2>" in page and "&lt;script&gt;" in page and "<script>" not in page
    # [[hosts]] order: x86 before graviton, whatever order the surveys ended in
    assert md.index("| x86 | amd64") < md.index("| graviton | arm64")


def test_reports_of_one_machine_merge_under_its_own_name() -> None:
    """`make demo` runs amd64 first, then arm64 (emulated) on the same machine: its reports
    name one host, not `local-amd64` and `local-amd64-2` (an arm64 column "@ local-amd64-2")."""
    from ecoready.report.merge import merge

    def run_of(arch: str, run_id: str, emulated: tuple[str, ...]) -> Report:
        planned = (CellPlanned(f"db/{arch}", "db", "db", "server", arch, "local", arch != "amd64"),)
        host = HostFacts("local", "amd64", emulated_arches=emulated, cpus=2, kernel="6.1", serves=(arch,))
        return fold([RunStarted(run_id, "2026-01-01T00:00:00Z", "m.toml", Profile.SMOKE, (arch,), planned, (host,))])

    merged = merge([("amd.json", run_of("amd64", "1" * 32, ())), ("arm.json", run_of("arm64", "2" * 32, ("arm64",)))])
    assert [h.name for h in merged.hosts] == ["local"]
    assert merged.hosts[0].arches == ("amd64", "arm64") and merged.hosts[0].emulated_arches == ("arm64",)
    assert {c.host for c in merged.cells.values()} == {"local"}
    assert column_title(merged, "arm64") == "arm64"
