"""Saved reports written before stages carried their blame: the one place that still
reads a detail's wording, to give each ended stage of such a report its cause (and the
detail without the words the cause now says: `missing: …` becomes the cause
`not-published` and the bare detail). A report that carries blames is read as it is.

The rules are those the views used to apply to the wording before the cause was data;
they must not grow: a new cause is written by the code that sees it, never read back.
"""

from __future__ import annotations

import re

from ecoready.domain.blame import COMPONENT_FAILURE, UNSAID, Blame, Cause, Outcome, Stage
from ecoready.domain.codec import Plain, to_plain

# `docker.io: unreachable (ConnectError: …)`: a registry that could not be asked
_REGISTRY = re.compile(
    r"^(?P<registry>[a-z0-9.-]+\.[a-z]+(?::\d+)?|[0-9.]+:\d+|localhost(?::\d+)?): "
    r"(?P<reason>(?:(?:registry )?unreachable|no answer|rate limit|refus|HTTP 5).*)$"
)
_UNREACHABLE_HOST = re.compile(r"^host (?P<host>\S+): unreachable")
_LABELS = (  # the longest first: `mislabelled binary` before `mislabelled`
    ("mislabelled binary", Cause.MISLABELLED_BINARY),
    ("mislabelled", Cause.MISLABELLED_IMAGE),
    ("missing", Cause.NOT_PUBLISHED),
)


def with_blame(data: Plain, where: str) -> Plain:
    """A saved stage's fields, given a blame when an older report has none."""
    if "blame" in data or not isinstance(data.get("detail"), str):
        return data
    try:
        stage, outcome = Stage(data.get("stage")), Outcome(data.get("outcome"))
    except ValueError:
        return data  # the field's own check names what is wrong
    blame, detail = old_blame(stage, outcome, data["detail"])
    if blame is None:
        return data
    return {**data, "detail": detail, "blame": to_plain(blame)}


def old_blame(stage: Stage, outcome: Outcome, detail: str) -> tuple[Blame | None, str]:
    """The blame of a stage of an older report, and its detail without the cause's words."""
    if outcome is Outcome.PASS:
        return None, detail
    if outcome is Outcome.FAIL:
        return _failed(stage, detail)
    if outcome is not Outcome.ERROR:
        return Blame(UNSAID[outcome]), detail
    detail, _, fix = detail.partition("; fix: ")
    registry = _REGISTRY.match(detail)
    if registry:
        return Blame(Cause.REGISTRY, registry["registry"], fix), registry["reason"]
    if detail.startswith("backend "):
        name, _, why = detail.removeprefix("backend ").partition(" ")
        why = why.removeprefix(": ") if name.endswith(":") else why
        behind = Cause.REGISTRY if _REGISTRY.match(why) else None
        return Blame(Cause.BACKEND, name.rstrip(":"), fix, behind), why
    host = _UNREACHABLE_HOST.match(detail)
    if host:
        return Blame(Cause.ENGINE_UNREACHABLE, host["host"], fix), detail
    for words, cause in (
        ("no host for", Cause.NO_HOST),
        ("docker daemon unavailable", Cause.HOST_LOST),
        ("docker engine", Cause.ENGINE_UNREACHABLE),
        ("interrupted", Cause.INTERRUPTED),
        ("internal error", Cause.INTERNAL),
    ):
        if detail.startswith(words):
            return Blame(cause, fix=fix), detail
    return Blame(Cause.TOOL, fix=fix), detail


def _failed(stage: Stage, detail: str) -> tuple[Blame, str]:
    for words, cause in _LABELS:
        if detail.startswith(words):
            rest = detail.removeprefix(words).removeprefix(":").lstrip()
            if cause is Cause.NOT_PUBLISHED and stage is Stage.IMAGE and "not found" in rest:
                cause = Cause.NO_SUCH_IMAGE
            return Blame(cause), rest
    if "exec format error" in detail:
        return Blame(Cause.NOT_FOR_THIS_CPU), detail
    if stage is Stage.SMOKE and detail.startswith("failed: "):
        return Blame(Cause.CHECK_FAILED, detail.removeprefix("failed: ")), detail
    return Blame(COMPONENT_FAILURE[stage]), detail
