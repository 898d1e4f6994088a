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
from ecoready.report.present import packaging_text

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


def render_table(report: DriversReport) -> str:
    header = ("driver", "arch", "version", "packaging", "what the registry has")
    rows = [
        (
            one_line(c.spec, 70),
            c.arch,
            one_line(c.packaging.version, 30) if c.packaging else "",
            one_line(verdict(c), 90),
            one_line(c.packaging.detail, 200) if c.packaging else "",
        )
        for c in report.checks
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        lines.append(("  ".join(row[i].ljust(widths[i]) for i in range(len(widths))) + "  " + row[-1]).rstrip())
    lines.insert(1, "-" * min(120, max(len(line) for line in lines)))
    lines.append("")
    lines += [registry_line(r) for r in report.registries]
    total = len(report.checks)
    counts = ", ".join(f"{n} {v}" for v, n in summary(report).items())
    lines.append(f"{total} check{'s' if total != 1 else ''}: {counts} in {report.seconds:.2f} s")
    return "\n".join(lines) + "\n"
