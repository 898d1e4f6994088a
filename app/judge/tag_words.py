"""The tag watch's findings in words (for stdout and the webhook's `text`), and the
webhook's body: Slack-compatible `text` plus the findings as data (`tags`), as `check`
posts its diff (`webhook.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ecoready import __version__
from ecoready.domain.codec import to_plain
from ecoready.judge.tag_findings import Change, Judged, TagFinding
from ecoready.judge.webhook import MAX_LINES, slack_escape


def day(at: str) -> str:
    """`2026-12-05T10:00:00Z` -> `2026-12-05`."""
    return at[:10]


def _lag(days: float) -> str:
    if days >= 1:
        whole = int(days)
        return f"{whole} day{'s' if whole != 1 else ''}"
    hours = int(days * 24)
    return f"{hours} hour{'s' if hours != 1 else ''}" if hours else "less than an hour"


def _digest(digest: str) -> str:
    return digest.split(":", 1)[-1][:12]


def finding_line(f: TagFinding) -> str:
    new = "" if f.news else " (said before)"
    if f.change is Change.GAINED:
        return f"{f.reference} now publishes {f.arch}, seen {day(f.since)} ({_digest(f.digest)})"
    if f.change is Change.LOST:
        return f"{f.reference} no longer publishes {f.arch}, seen {day(f.since)}: a regression"
    if f.change is Change.BEHIND:
        return (
            f"{f.arch} of {f.reference} is {_lag(f.days)} behind {f.other}: {f.other} rebuilt {day(f.since)} "
            f"({_digest(f.other_digest)}), {f.arch} not since ({_digest(f.digest)}){new}"
        )
    how = f"use {f.other}" if f.same_version else f"upgrade to >= {f.other}"
    what = "the same version under that name" if f.same_version else "a newer version of the same line"
    return f"{f.reference} lacks {f.arch}; {f.other} publishes it ({what}): {how}{new}"


def headline(judged: Judged) -> str:
    lost = sum(f.regression for f in judged.findings)
    news = sum(f.news for f in judged.findings)
    if lost:
        return f"{lost} arch{'es' if lost != 1 else ''} lost (a regression)"
    return f"{news} change{'s' if news != 1 else ''} in the tags watched" if news else "no change in the tags watched"


def lines(judged: Judged, pins: Sequence[str] = ()) -> list[str]:
    out = [finding_line(f) for f in judged.findings]
    out.extend(pins)
    out.extend(f"{reference}: no such tag in its registry (nothing published to watch)" for reference in judged.absent)
    for one in judged.unchecked:
        out.append(f"{one.reference}: not checked: registry {one.registry}: {one.error}")
    return out


def text(judged: Judged, directory: Path, watched: int, pins: Sequence[str] = ()) -> str:
    """What stdout says: the findings, the pins that can go, what could not be asked."""
    out = lines(judged, pins)
    if judged.first:
        n = len(judged.first)
        out.insert(0, f"first look at {n} reference{'s' if n != 1 else ''}: recorded in {directory}")
    if not out:
        out = [f"no change in the {watched} tag{'s' if watched != 1 else ''} watched"]
    return "".join(f"{line}\n" for line in out)


def payload(judged: Judged, matrix: str, pins: Sequence[str] = ()) -> dict[str, Any]:
    """The webhook's body: `text` for people (Slack), `tags` for programs."""
    said = lines(judged, pins)
    shown = said[:MAX_LINES]
    if len(said) > MAX_LINES:
        shown.append(f"... and {len(said) - MAX_LINES} more (see tags)")
    body = "\n".join([f"ecoready: {matrix}: {headline(judged)}", *(f"• {line}" for line in shown)])
    findings = [{**to_plain(f), "regression": f.regression} for f in judged.findings]
    return {"text": slack_escape(body), "tags": {"findings": findings, "pins": list(pins)}, "ecoready": __version__}


def worth_posting(judged: Judged) -> bool:
    """The webhook hears of a check that found something new (states said before are not
    posted again)."""
    return any(f.news for f in judged.findings)
