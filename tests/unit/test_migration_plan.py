"""The migration plan's wording from a report alone: each verdict (ready, use TAG, upgrade
to, emulate with its cost, blocked, unknown), the pins that can go, and the plan in every
format (JSON round trip, Markdown, HTML, `ecoready plan`), made inert. The reports are
CONSTRUCTED: each cell is shaped like the lab's (tests/data/reports) in the state named."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ecoready.domain.events import RunStarted, TagsSearched
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import Category, CellResult, ComponentOrigin, Migration, Profile, Report, Status, TagSearch
from ecoready.domain.state import empty_report, reduce
from ecoready.report import html, markdown
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.merge import merge
from ecoready.report.migration import Action, emulation_slowdown, plan_pins, plan_steps
from tests.support.cli import ecoready

REF = "127.0.0.1:5000/lab/"


def cell(
    component: str,
    arch: str,
    status: Status,
    *,
    emulated: bool = False,
    seconds: float = 5.0,
    found_as: str = "index",
    found_tag: str = "",
    detail: str = "",
) -> CellResult:
    image = (
        ImageInfo(f"{REF}{component}:1", arch, "sha256:" + "1" * 64, found_as=found_as, found_tag=found_tag)
        if status is Status.READY
        else None
    )
    return CellResult(
        id=f"{component}/{arch}",
        component=component,
        name=component,
        category=Category.APP if component == "app" else Category.SERVER,
        arch=arch,
        host="local",
        emulated=emulated,
        status=status,
        seconds=seconds,
        image=image,
        detail=detail,
    )


def report(cells: list[CellResult], origins: list[ComponentOrigin], searches: Sequence[TagSearch] = ()) -> Report:
    return Report(
        schema_version=1,
        run_id="a" * 32,
        tool_version="0",
        matrix="stack.toml",
        profile=Profile.SMOKE,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
        arches=("amd64", "arm64"),
        cells={c.id: c for c in cells},
        migration=Migration(tuple(origins), tuple(searches)),
    )


def origin(component: str, platform: str = "") -> ComponentOrigin:
    return ComponentOrigin(component, f"{REF}{component}:1", component, platform)


def stack() -> Report:
    """Every verdict once: db ready (emulated on arm64), app ready, suffix via 1-aarch64,
    upgrade found by the search, one blocked, one only ready emulated, one error."""
    missing = "missing: the index publishes amd64 only; no 1-aarch64 or 1-arm64 tag"
    cells = [
        cell("db", "amd64", Status.READY, seconds=5.0),
        cell("db", "arm64", Status.READY, emulated=True, seconds=27.5),
        cell("app", "amd64", Status.READY, seconds=2.0),
        cell("app", "arm64", Status.READY, emulated=True, seconds=10.0),
        cell("suffix", "amd64", Status.READY),
        cell(
            "suffix",
            "arm64",
            Status.READY,
            emulated=True,
            seconds=20.0,
            found_tag="1-aarch64",
            found_as="tag 1-aarch64",
        ),
        cell("upgrade", "amd64", Status.READY),
        cell("upgrade", "arm64", Status.MISSING, emulated=True, detail=missing),
        cell("legacy", "amd64", Status.READY),
        cell("legacy", "arm64", Status.MISSING, emulated=True, detail=missing),
        cell("armonly", "amd64", Status.MISSING, detail="missing: a single-arch image for arm64"),
        cell("armonly", "arm64", Status.READY, emulated=True, seconds=21.4),
        cell("flaky", "amd64", Status.ERROR, detail="image: 127.0.0.1:5000: rate limit reached (HTTP 429)"),
    ]
    origins = [
        origin(n, "linux/amd64" if n in ("db", "upgrade", "legacy", "suffix", "flaky") else "")
        for n in ("db", "app", "suffix", "upgrade", "legacy", "armonly", "flaky")
    ]
    searches = [
        TagSearch("upgrade", "arm64", f"{REF}upgrade:1", tags_listed=2, looked_at=1, upgrade_to="2"),
        TagSearch("legacy", "arm64", f"{REF}legacy:1", tags_listed=1, looked_at=0),
        TagSearch("armonly", "amd64", f"{REF}armonly:1", tags_listed=1, looked_at=0),
    ]
    return report(cells, origins, searches)


def steps_by_cell(r: Report) -> dict[str, tuple[Action, str, str]]:
    return {f"{s.component}/{s.arch}": (s.action, s.text, s.why) for s in plan_steps(r)}


def test_every_verdict() -> None:
    steps = steps_by_cell(stack())
    assert steps["db/amd64"][:2] == (Action.READY, "ready")
    assert steps["db/arm64"][:2] == (Action.READY, "ready") and "under emulation" in steps["db/arm64"][2]
    assert steps["suffix/arm64"][:2] == (Action.USE, "use 1-aarch64")
    assert steps["upgrade/arm64"][:2] == (Action.UPGRADE, "upgrade to >= 2")
    assert "looked at 1 of 2 tags" in steps["upgrade/arm64"][2]
    assert steps["legacy/arm64"][:2] == (Action.BLOCKED, "blocked")
    assert "no other tag publishes arm64 (looked at 0 of 1 tags)" in steps["legacy/arm64"][2]
    action, text, why = steps["armonly/amd64"]
    assert (action, text) == (Action.EMULATE, "emulate the arm64 image")
    assert "ready under emulation in 21.4 s" in why and "took 5.0x as long as native ones" in why
    assert steps["flaky/amd64"][:2] == (Action.UNKNOWN, "unknown") and "rate limit" in steps["flaky/amd64"][2]


def test_a_use_tag_found_by_the_search() -> None:
    r = stack()
    searches = (TagSearch("legacy", "arm64", f"{REF}legacy:1", tags_listed=3, looked_at=1, use_tag="1-arm64v8"),)
    r = replace(r, migration=replace(r.migration, searches=searches))
    assert steps_by_cell(r)["legacy/arm64"][:2] == (Action.USE, "use 1-arm64v8")


def test_a_failed_search_is_said_and_leaves_the_cell_blocked() -> None:
    r = stack()
    searches = (TagSearch("legacy", "arm64", f"{REF}legacy:1", error="rate limit reached (HTTP 429)"),)
    r = replace(r, migration=replace(r.migration, searches=searches))
    action, _, why = steps_by_cell(r)["legacy/arm64"]
    assert action is Action.BLOCKED and why.endswith("rate limit reached (HTTP 429)")


def test_the_emulation_cost_is_the_median_ratio_of_ready_pairs() -> None:
    assert emulation_slowdown(stack()) == 5.0  # db 27.5/5, app 10/2, suffix 20/5: the median of 5.5, 5.0, 4.0
    assert emulation_slowdown(report([cell("db", "amd64", Status.READY)], [origin("db")])) is None


def test_which_pins_can_go() -> None:
    r = stack()
    pins = {p.component: (p.verdict, p.why) for p in plan_pins(r, plan_steps(r))}
    assert pins["db"] == ("drop", "ready on arm64")
    assert pins["upgrade"] == ("drop after", "arm64: upgrade to >= 2")
    assert pins["suffix"] == ("drop after", "arm64: use 1-aarch64")
    assert pins["legacy"] == ("keep", "arm64: blocked")
    assert pins["flaky"][0] == "unknown"
    assert set(pins) == {"db", "upgrade", "suffix", "legacy", "flaky"}  # only pinned services


def test_reports_without_origins_have_no_plan() -> None:
    r = replace(stack(), migration=Migration())
    assert plan_steps(r) == [] and plan_pins(r, []) == []
    assert "Migration plan" not in markdown.render(r) and "Migration plan" not in html.render(r)


def test_the_json_section_round_trips_and_holds_the_plan() -> None:
    r = stack()
    text = json_report.render(r)  # validated against the schema by conftest
    data = json.loads(text)
    assert [p["text"] for p in data["migration"]["plan"] if p["component"] == "upgrade"] == ["ready", "upgrade to >= 2"]
    assert {p["component"]: p["verdict"] for p in data["migration"]["pins"]}["db"] == "drop"
    back = parse_report(text)
    assert back.migration == r.migration
    assert json_report.render(back) == text


def test_events_build_the_migration() -> None:
    start = RunStarted(
        "b" * 32, "2026-01-01T00:00:00Z", "m.toml", Profile.SMOKE, ("amd64",), (), origins=(origin("db"),)
    )
    found = TagSearch("db", "amd64", f"{REF}db:1", upgrade_to="2")
    r = reduce(reduce(empty_report(), start), TagsSearched("db/amd64", found))
    again = reduce(r, TagsSearched("db/amd64", replace(found, upgrade_to="3")))
    assert r.migration == Migration((origin("db"),), (found,))
    assert again.migration.searches == (replace(found, upgrade_to="3"),)  # a re-run's search replaces the first


def test_a_merge_keeps_origins_and_the_searches_of_the_cells_it_kept() -> None:
    amd = report([cell("legacy", "amd64", Status.READY)], [origin("legacy", "linux/amd64")])
    arm = report(
        [cell("legacy", "arm64", Status.MISSING, detail="missing")],
        [origin("legacy", "linux/amd64")],
        [TagSearch("legacy", "arm64", f"{REF}legacy:1", tags_listed=2, looked_at=1, upgrade_to="2")],
    )
    merged = merge([("amd.json", amd), ("arm.json", replace(arm, run_id="c" * 32))])
    assert merged.migration.origins == (origin("legacy", "linux/amd64"),)
    assert [s.upgrade_to for s in merged.migration.searches] == ["2"]


def test_markdown_and_html_show_the_plan_inert() -> None:
    r = stack()
    hostile = ComponentOrigin("db", "evil<script>|`x`\x1b[31m", "db", "linux/amd64")
    r = replace(r, migration=replace(r.migration, origins=(hostile, *r.migration.origins[1:])))
    md = markdown.render(r)
    assert "## Migration plan" in md and "### Arch pins (compose `platform:`, Kubernetes node selectors)" in md
    assert "| upgrade | 127.0.0.1:5000/lab/upgrade:1 | arm64 | upgrade to &gt;= 2 |" in md
    assert "<script>" not in md and "\x1b" not in md and "\\|" in md
    page = html.render(r)
    assert "<h2>Migration plan</h2>" in page and "upgrade to &gt;= 2" in page
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_the_plan_verb_prints_the_tables(tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(json_report.render(stack()))
    result = ecoready("plan", str(saved))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Migration plan: stack.toml")
    assert result.stdout.index("### What to change, in order") < result.stdout.index("| legacy |")
    assert "| legacy | 127.0.0.1:5000/lab/legacy:1 | arm64 | blocked |" in result.stdout
    assert "| legacy | legacy | linux/amd64 | keep | arm64: blocked |" in result.stdout
    old = tmp_path / "old.json"
    old.write_text(json_report.render(replace(stack(), migration=Migration())))
    refused = ecoready("plan", str(old))
    assert refused.returncode == 2 and "predates" in refused.stderr


def test_a_merged_report_derives_no_emulation_cost() -> None:
    """Its halves ran apart, under other loads: the ratio is 'not measured'."""
    from ecoready.report.merge import merge

    r = stack()
    half = replace(r, run_id="b" * 32)
    merged = merge([("one.json", r), ("two.json", half)])
    assert len(merged.merged_from) == 2 and emulation_slowdown(merged) is None
    why = steps_by_cell(merged)["armonly/amd64"][2]
    assert "not measured" in why and "as long as" not in why


def test_the_emulation_cost_leaves_the_benches_out() -> None:
    from ecoready.domain.model import Outcome, Stage, StageResult

    r = stack()
    cells = dict(r.cells)
    native = cells["db/amd64"]
    # 5 s of start and smoke, plus a 80 s bench: still 5 s of work against emulated 27.5 s
    cells["db/amd64"] = replace(
        native, seconds=native.seconds + 80, stages=(*native.stages, StageResult(Stage.BENCH, Outcome.PASS, 80.0))
    )
    assert emulation_slowdown(replace(r, cells=cells)) == 5.0


def test_the_plan_leads_with_the_actions_in_order() -> None:
    from ecoready.report.migration import actions

    todo = actions(stack())
    kinds = [t.split(": ")[1].split()[0] if " on " in t.split(": ")[0] else t for t in todo]
    assert todo[0].startswith("suffix on arm64: use 1-aarch64 instead of")  # a tag: cheapest, surest
    assert todo[1].startswith("upgrade on arm64: upgrade to >= 2")
    assert todo[2].startswith("db: drop the pin linux/amd64")
    assert any(t.startswith("armonly on amd64: no image for amd64; emulate the arm64 image") for t in todo)
    assert todo[-2].startswith("legacy on arm64: blocked:") and "decide:" in todo[-2]
    assert todo[-1] == "check again (the run could not judge them): flaky/amd64"
    assert len(kinds) == 8
    assert actions(report([cell("db", "amd64", Status.READY)], [origin("db")])) == []


def test_a_blocked_cell_quotes_the_telling_log_line_and_what_the_other_arch_showed() -> None:
    log = (
        "[Note] [Entrypoint]: Initializing database files",
        "0 [ERROR] InnoDB: Can't create file './ibdata1' when --innodb-read-only is set",
        "0 [ERROR] Plugin 'InnoDB' registration as a STORAGE ENGINE failed.",
        "0 [ERROR] Aborting",
    )
    broken = replace(
        cell("ro", "arm64", Status.BROKEN, detail="exited with code 1: 0 [ERROR] Aborting", emulated=True), log_tail=log
    )
    ready = cell("ro", "amd64", Status.READY)
    why = steps_by_cell(report([ready, broken], [origin("ro")]))["ro/arm64"][2]
    assert "Can't create file './ibdata1'" in why and why.count("Aborting") <= 1
    assert "ready on amd64 (natively): a gap of arm64's" in why
    both = replace(broken, id="ro/amd64", arch="amd64", emulated=False)
    why = steps_by_cell(report([both, broken], [origin("ro")]))["ro/arm64"][2]
    assert "broken on amd64 too, the same way: not an arch gap" in why


def test_the_plan_as_text_fits_80_columns_actions_first(tmp_path: Path) -> None:
    from ecoready.report.plan_text import render_plan

    text = render_plan(stack(), 80)
    assert max(len(line) for line in text.splitlines()) <= 80
    lines = text.splitlines()
    at = lines.index("What to change, in order:")
    assert lines[at + 1].startswith("  1. suffix on arm64: use 1-aarch64")
    assert text.index("What to change") < text.index("Every component and arch")
    saved = tmp_path / "report.json"
    saved.write_text(json_report.render(stack()))
    shown = ecoready("plan", str(saved), "--format", "text", env={"COLUMNS": "80"})
    assert shown.returncode == 0 and max(len(line) for line in shown.stdout.splitlines()) <= 80
    assert shown.stdout.startswith("Migration plan: stack.toml")
