"""`ecoready images` output (pure): the availability table as text, and as JSON.

Everything shown comes from registries, so the text is made inert (no escapes, no control
characters) before it reaches a terminal.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ecoready import __version__
from ecoready.domain.images import ImageCheck, ImagesReport, RegistryStatus, Verdict
from ecoready.domain.text import one_line
from ecoready.report.json import registry_dict
from ecoready.report.status_words import size_text
from ecoready.report.width import fit_table, terminal_width

IMAGES_SCHEMA_VERSION = 1


def check_dict(check: ImageCheck) -> dict[str, Any]:
    found = check.availability
    return {
        "component": check.component,
        "name": check.name,
        "arch": check.arch,
        "reference": found.reference,
        "registry": found.registry,
        "mirror": found.mirror,
        "verdict": found.verdict.value,
        "digest": found.digest,
        "index_digest": found.index_digest,
        "size": found.size,
        "found_as": found.found_as,
        "arches": list(found.arches),
        "pull_reference": found.pull_reference,
        "detail": found.detail,
    }


def verdict_counts(verdicts: Iterable[str]) -> dict[str, int]:
    """verdict -> how many, in name order: the `summary` of a JSON answer."""
    return dict(sorted(Counter(verdicts).items()))


def summary(report: ImagesReport) -> dict[str, int]:
    return verdict_counts(c.availability.verdict.value for c in report.checks)


def render_json(report: ImagesReport) -> str:
    data = {
        "schema_version": IMAGES_SCHEMA_VERSION,
        "tool": {"name": "ecoready", "version": __version__},
        "kind": "images",
        "matrix": report.matrix,
        "checked_at": report.checked_at,
        "seconds": report.seconds,
        "summary": summary(report),
        "checks": [check_dict(c) for c in report.checks],
        "registries": [registry_dict(r) for r in report.registries],
        "notes": list(report.notes),
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def how(check: ImageCheck) -> str:
    """How it was found, or why not."""
    found = check.availability
    text = found.found_as if found.verdict is Verdict.AVAILABLE else found.detail
    if found.mirror and found.verdict is not Verdict.ERROR:
        text += f" (mirror {found.mirror})"
    return one_line(text, 160)


def registry_line(status: RegistryStatus) -> str:
    parts = [f"{status.requests} request{'s' if status.requests != 1 else ''}"]
    if status.limit is not None or status.remaining is not None:
        window = f" per {_duration(status.window_s)}" if status.window_s else ""
        limit = f"rate limit {status.limit if status.limit is not None else '?'}{window}"
        remaining = f", {status.remaining} remaining" if status.remaining is not None else ""
        counted = f" (counted by {status.source})" if status.source else ""
        parts.append(limit + remaining + counted)
    if status.waited_s:
        parts.append(f"waited {status.waited_s:g} s as it asked (Retry-After)")
    if status.error:
        parts.append(f"could not be asked: {status.error}")
    return one_line(f"registry {status.registry}: " + ", ".join(parts), 300)


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def render_table(report: ImagesReport, total: int | None = None) -> str:
    """The table in `total` columns (default: the terminal's width): the reasons wrap;
    narrow, the digest and then the size columns go first."""
    header = ("component", "arch", "verdict", "size", "digest", "how it was found / why not")
    rows = [
        (
            one_line(c.component, 60),
            c.arch,
            c.availability.verdict.value,
            size_text(c.availability.size),
            c.availability.digest[:19] if c.availability.verdict in (Verdict.AVAILABLE, Verdict.MISLABELLED) else "",
            how(c),
        )
        for c in report.checks
    ]
    lines = fit_table(header, rows, total or terminal_width(), droppable=(4, 3))
    lines.append("")
    lines += [registry_line(r) for r in report.registries]
    counts = summary(report)
    total = len(report.checks)
    lines.append(
        f"{total} check{'s' if total != 1 else ''}: "
        + ", ".join(f"{n} {v}" for v, n in counts.items())
        + f" in {report.seconds:.2f} s"
    )
    return "\n".join(lines) + "\n"
