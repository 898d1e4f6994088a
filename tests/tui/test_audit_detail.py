"""The detail view's build audit section, on the recorded lab run with audits
(tests/data/reports/lab-audit.json): each program read, the findings worst first."""

from __future__ import annotations

from ecoready.ui.tui.detail import detail_renderable, plain
from tests.support.reports_sample import lab_report


def body(cell_id: str) -> str:
    return plain(detail_renderable(lab_report("lab-audit").cells[cell_id], 100), 100)


def test_the_detail_view_shows_each_program_read_and_the_findings() -> None:
    text = body("mariadb-10.11/arm64")
    audit = text[text.index("build audit") : text.index("benchmark")]
    assert "read in 3.1 s, crossed with local/arm64" in audit
    assert "path           /usr/sbin/mariadbd" in audit
    assert "atomics        LSE at run time (24 helpers)" in audit
    assert "segments       64 KiB" in audit
    assert "✔ mariadbd picks LSE atomics at run time (outline atomics); this qemu CPU has LSE: it uses them" in audit


def test_a_mislabelled_binary_leads_its_findings() -> None:
    text = body("gap-binary-mislabelled/arm64")
    assert "✘ broken: mislabelled binary: mariadbd (/usr/sbin/mariadbd) is built for amd64" in text
    audit = text[text.index("build audit") :]
    assert "✘ mislabelled binary: /usr/sbin/mariadbd is built for amd64, the image says arm64" in audit
    assert "arch           amd64" in audit


def test_two_programs_of_one_cell_are_both_shown() -> None:
    audit = body("mydumper/arm64")
    assert "/usr/bin/mydumper" in audit and "/usr/bin/myloader" in audit
    assert "• myloader has no atomic read-modify-write of its own" in audit
