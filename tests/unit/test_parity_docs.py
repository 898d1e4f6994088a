"""docs/parity.md's table of what parity leaves out is `parity_rules.LEFT_OUT`, row by row."""

from __future__ import annotations

import re
from pathlib import Path

from ecoready.domain.parity_rules import LEFT_OUT

DOC = Path(__file__).resolve().parents[2] / "docs" / "parity.md"


def test_the_documented_table_is_the_rules() -> None:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| ") and "`" in line]
    documented = {
        (cells[0], cells[1].strip("`"), cells[2], cells[3])
        for line in rows
        if len(cells := [c.strip() for c in line.strip("|").split("|")]) == 4
    }
    rules = {(r.facet.value, r.pattern, r.why.value, r.reason) for r in LEFT_OUT}
    assert rules <= documented
    assert {d for d in documented if d[2] in {w.value for w in {r.why for r in LEFT_OUT}}} == rules


def test_the_documented_neutral_values_are_the_rules() -> None:
    from ecoready.domain.parity_rules import NEUTRAL

    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    documented = {  # a pipe inside a cell is written `\|` (Markdown)
        (cells[0], cells[1].strip("`").replace("\\|", "|"), cells[3], cells[4])
        for line in rows
        if len(cells := [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]) == 5
    }
    assert {(n.facet.value, n.pattern, n.why.value, n.reason) for n in NEUTRAL} <= documented
