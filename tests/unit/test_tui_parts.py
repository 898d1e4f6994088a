"""The TUI's pure parts: cell labels at every width, the compare headline, filters, the
chart, export format discovery, and that text from containers stays inert."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.images import RegistryStatus
from ecoready.domain.model import Category, CellResult, Stage, Status
from ecoready.domain.state import fold
from ecoready.report import available
from ecoready.report.cost import compare
from ecoready.report.status_words import EMULATED_MARK, shows_emulated
from ecoready.ui.tui.bars import bar, bar_chart
from ecoready.ui.tui.detail import detail_renderable, plain
from ecoready.ui.tui.export import export_report
from ecoready.ui.tui.filters import PROBLEMS, RowFilter, apply_choice, filter_choices
from ecoready.ui.tui.header import header_text, registry_status, short_emulator
from ecoready.ui.tui.look import Motion, cell_label, compare_label
from tests.support import streams


def cell(status: Status, **changes: Any) -> CellResult:
    base = CellResult("db/arm64", "db", "DB", Category.SERVER, "arm64", "local", emulated=True, status=status)
    return replace(base, **changes)


@pytest.mark.parametrize("width", range(8, 40))
def test_a_label_always_fits_and_keeps_glyph_and_emulated_mark(width: int) -> None:
    for status in Status:
        c = cell(status, detail="exec format error (the binary is not for this CPU)", seconds=12.9, stage=Stage.SMOKE)
        label = cell_label(c, width, Motion(3, 100.0, {c.id: 88.0}))
        assert len(label) <= width, (status, label)
        assert label.endswith(EMULATED_MARK) is shows_emulated(c), label
        assert label[0] == cell_label(c, 100)[0]  # the glyph carries the meaning


def test_labels_read_as_the_issue_shows_them() -> None:
    ready = cell(Status.READY, seconds=4.1, emulated=False)
    assert cell_label(ready, 30) == "✔ ready 4.1s"
    assert cell_label(ready, 12) == "✔ 4.1s"  # narrow columns: the same short form everywhere
    assert cell_label(cell(Status.MISSING), 30) == "∅ missing"  # never ran: not emulated
    broken = cell(Status.BROKEN, detail="exec format error", emulated=False)
    assert cell_label(broken, 40) == "✘ broken: exec format error"
    assert cell_label(broken, 10) == "✘ broken"
    running = cell(Status.RUNNING, stage=Stage.START)
    assert cell_label(running, 30) == f"▶ start {EMULATED_MARK}"
    assert cell_label(running, 30, Motion(0, 100.0, {})) == f"▶ start ⠋ {EMULATED_MARK}"
    moving = Motion(1, 100.0, {running.id: 88.0})
    assert cell_label(running, 30, moving) == f"▶ start 12s ⠙ {EMULATED_MARK}"
    assert cell_label(running, 13, moving) == f"▶ start ⠙ {EMULATED_MARK}"  # the seconds go first
    assert cell_label(running, 10, moving) == f"▶ start {EMULATED_MARK}"


def test_compare_headline_only_for_native_benchmarks() -> None:
    report = fold(streams.two_native_hosts())
    comparison = compare(report)
    cells = {c.arch: c for c in report.cells.values() if c.component == "mariadb-10.11"}
    # 32 threads: 4460 / 4120 tps; per USD-hour (4460/0.616) / (4120/0.768)
    assert compare_label(comparison, "mariadb-10.11", cells) == "tps ×1.08 $ ×1.35"
    assert compare_label(comparison, "pmm-server", {}) == "–"
    emulated = {a: replace(c, emulated=True) for a, c in cells.items()}
    assert compare_label(
        compare(replace(report, cells={c.id: c for c in emulated.values()})), "mariadb-10.11", emulated
    )
    assert compare_label(
        compare(replace(report, cells={c.id: c for c in emulated.values()})), "mariadb-10.11", emulated
    ).startswith(EMULATED_MARK)


def test_filters_by_category_status_and_search() -> None:
    report = fold(streams.lab_like())
    rows = {
        c.component: [x for x in report.cells.values() if x.component == c.component] for c in report.cells.values()
    }

    def shown(f: RowFilter) -> list[str]:
        return [cid for cid, cells in rows.items() if f.matches(cid, cells[0].name, cells[0].category, cells)]

    assert shown(RowFilter(category=Category.SERVER)) == ["mariadb-10.11", "mariadb-11.8"]
    assert shown(RowFilter(status="missing")) == ["proxysql-2.7"]
    assert "mariadb-10.11" not in shown(RowFilter(status=PROBLEMS))
    assert shown(RowFilter(search="BACKUP")) == ["mariadb-backup"]
    assert shown(RowFilter(category=Category.SERVER, search="11.8")) == ["mariadb-11.8"]
    f = apply_choice(RowFilter(), "category:server")
    assert f.category is Category.SERVER
    assert apply_choice(f, "category:server").category is None  # choosing again removes it
    assert apply_choice(apply_choice(f, "status:broken"), "clear") == RowFilter()
    ids = [option for option, _ in filter_choices(report)]
    assert "category:server" in ids and "status:missing" in ids and "category:shell" not in ids


def test_bar_chart_scales_to_the_largest_value() -> None:
    assert bar(1, 1, 4) == "████"
    assert bar(0.5, 1, 4) == "██"
    assert bar(1, 8, 1) == "▏"
    assert bar(0, 1, 4) == ""
    lines = bar_chart([("arm64", [(1, 100.0), (8, 800.0)]), ("amd64", [(1, 200.0), (8, 400.0)])], 40)
    assert [line.split()[0:2] for line in lines] == [["1", "arm64"], ["1", "amd64"], ["8", "arm64"], ["8", "amd64"]]
    longest = max(lines, key=lambda line: line.count("█"))
    assert longest.startswith("8 arm64") and longest.rstrip().endswith("800")
    assert len({len(line) for line in lines}) == 1


def test_detail_text_from_containers_is_inert_and_emulated_bench_has_no_chart() -> None:
    events = streams.two_native_hosts()
    report = fold(events)
    hostile = replace(
        report.cells["mariadb-10.11/arm64"],
        log_tail=("[bold red]spoof[/] \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07",),
        detail="[link=http://evil]click[/link]",
    )
    text = plain(detail_renderable(hostile, 100), 100)
    assert "[bold red]spoof[/]" in text and "[link=http://evil]click[/link]" in text
    assert "\x1b" not in text and "red link" in text
    assert "tps over threads" in text
    assert hostile.bench is not None
    emulated = replace(hostile, emulated=True, bench=replace(hostile.bench, emulated=True))
    text = plain(detail_renderable(emulated, 100), 100)
    assert "not the component's performance" in text and "tps over threads" not in text


def test_header_names_hosts_arches_and_emulator() -> None:
    report = fold(streams.lab_like())
    text = header_text(report, "[b]lab[/b]\x1b[2J", 160).plain
    assert "local: amd64 native · arm64 ᵉemulated (qemu-aarch64 10.0.2)" in text
    assert short_emulator("qemu-aarch64 version 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)") == "qemu-aarch64 10.0.13"
    assert "[b]lab[/b]" in text and "\x1b" not in text


def test_header_says_each_registrys_requests_rate_limit_and_failure() -> None:
    report = replace(
        fold(streams.lab_like()),
        registries=(
            RegistryStatus("127.0.0.1:5000", requests=14),
            RegistryStatus("registry-1.docker.io", requests=9, limit=100, remaining=7, window_s=21600, source="ip"),
            RegistryStatus("ghcr.io", requests=1, error="[red]connect timeout[/red]\x1b[2J"),
        ),
    )
    line = header_text(report, "lab", 200).plain.splitlines()[-1]
    assert line == (
        "registries: 127.0.0.1:5000 14 req · registry-1.docker.io 9 req, 7/100 per 6h left"
        " · ghcr.io 1 req ⚠ [red]connect timeout[/red]"
    )
    assert registry_status(fold(streams.lab_like())) is None  # nothing asked yet: no line


def test_export_formats_are_discovered_and_json_is_written(tmp_path: Path) -> None:
    formats = {fmt.module: render for fmt, render in available()}
    assert "json" in formats
    for name in ("markdown", "html", "junit"):  # present exactly when their module is
        module = Path(__file__).resolve().parents[2] / "app" / "report" / f"{name}.py"
        assert (name in formats) == module.exists()
    report = fold(streams.lab_like())
    path = export_report(report, formats["json"], str(tmp_path / "r.json"))
    assert json.loads(path.read_text())["run_id"] == report.run_id


def test_the_name_column_fits_its_longest_name_while_the_arch_columns_keep_room() -> None:
    from ecoready.ui.tui.grid import column_widths

    name = "connector-python-mysqlclient"
    component, arch, _ = column_widths(120, ("amd64", "arm64"), [name, "mysql-8.4"], compare=False)
    assert component >= len(name) + 2 and arch >= 12  # no `connector-python-mysqlclie`
    component, arch, _ = column_widths(40, ("amd64", "arm64"), [name + "-and-more-words"], compare=False)
    assert component == 28 and arch == 12  # a narrow terminal: the name is cut, not the cells


def test_the_compare_column_only_when_native_numbers_can_fill_it() -> None:
    from ecoready.domain.state import fold
    from ecoready.ui.tui.grid import comparable
    from tests.support import streams

    assert comparable(fold(streams.two_native_hosts()))
    assert not comparable(fold(streams.lab_like()))  # arm64 only emulated: nothing to compare


def test_the_progress_line_says_estimating_until_the_run_has_shown_enough() -> None:
    """The ETA (plan/eta.py, tested in test_eta.py) is learned from finished cells: with none
    finished the line says so instead of a guess."""
    from ecoready.domain.model import Category, CellResult, HostFacts, Profile, Report
    from ecoready.plan.eta import Expected
    from ecoready.ui.tui.statusbar import ProgressState

    host = HostFacts("h", "amd64", (), {}, cpus=2)
    cells = {
        f"c{i}/amd64": CellResult(f"c{i}/amd64", f"c{i}", f"c{i}", Category.SERVER, "amd64", "h", False)
        for i in range(4)
    }
    report = Report(1, "r", "0", "m", Profile.SMOKE, "t", hosts=(host,), cells=cells)
    state = ProgressState(clock=lambda: 5.0)
    state.start(cells, "run", {cid: Expected(10.0, 0.0, 1, "h", "server") for cid in cells})
    assert "0:00 elapsed · ETA estimating" in state.text(report).plain
