"""`ecoready drivers` output (pure): the packaging verdicts as a table, and as JSON.
Everything shown comes from registries, so the text is made inert before a terminal."""

from __future__ import annotations

import json

from ecoready import __version__
from ecoready.domain.codec import to_plain
from ecoready.domain.drivers import DriverCheck, DriversReport
from ecoready.domain.text import one_line
from ecoready.report.images_table import registry_line, verdict_counts
from ecoready.report.json import registry_dict
from ecoready.report.status_words import packaging_text
from ecoready.report.width import fit_table, terminal_width

DRIVERS_SCHEMA_VERSION = 1


def verdict(check: DriverCheck) -> str:
    return packaging_text(check.packaging) if check.packaging is not None else f"error: {check.error}"


def summary(report: DriversReport) -> dict[str, int]:
    return verdict_counts(c.packaging.verdict.value if c.packaging is not None else "error" for c in report.checks)


def render_json(report: DriversReport) -> str:
    data = {
        "schema_version": DRIVERS_SCHEMA_VERSION,
        "tool": {"name": "ecoready", "version": __version__},
        "kind": "drivers",
        "checked_at": report.checked_at,
        "seconds": report.seconds,
        "summary": summary(report),
        "checks": [to_plain(c) for c in report.checks],
        "registries": [registry_dict(r) for r in report.registries],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_table(report: DriversReport, total: int | None = None) -> str:
    """The table in `total` columns (default: the terminal's width): the registry's words
    wrap; narrow, the version column goes first."""
    header: tuple[str, ...] = ("driver", "arch", "version", "packaging", "what the registry has")
    rows: list[tuple[str, ...]] = [
        (
            one_line(c.spec, 70),
            c.arch,
            one_line(c.packaging.version, 30) if c.packaging else "",
            one_line(verdict(c), 90),
            one_line(c.packaging.detail, 200) if c.packaging else "",
        )
        for c in report.checks
    ]
    total = total or terminal_width()
    if sum(max(len(r[i]) for r in [header, *rows]) + 2 for i in range(4)) + 24 > total:
        # narrow: the verdict leads the registry's words, both wrapped, none cut
        header = ("driver", "arch", "version", "packaging: what the registry has")
        rows = [(r[0], r[1], r[2], f"{r[3]}: {r[4]}" if r[4] else r[3]) for r in rows]
    lines = fit_table(header, rows, total, droppable=(2,))
    lines.append("")
    lines += [registry_line(r) for r in report.registries]
    total = len(report.checks)
    counts = ", ".join(f"{n} {v}" for v, n in summary(report).items())
    lines.append(f"{total} check{'s' if total != 1 else ''}: {counts} in {report.seconds:.2f} s")
    return "\n".join(lines) + "\n"
