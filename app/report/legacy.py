"""Saved reports written before stages carried their blame: the one place that still
reads a detail's wording, to give each ended stage of such a report its cause (and the
detail without the words the cause now says: `missing: …` becomes the cause
`not-published` and the bare detail). A report that carries blames is read as it is.

The same for the other facts once said in words only: an image found under another tag
(`found_as` `tag 1-aarch64`: `found_tag`), a driver's install (`failed: why`, `built from
source`: `install_kind`), a run note about a registry not asked (`registry docker.io: …`:
`about`). A report that has the field is read as it is.

The rules are those the views used to apply to the wording before the cause was data;
they must not grow: a new cause is written by the code that sees it, never read back.
"""

from __future__ import annotations

import re

from ecoready.domain.blame import COMPONENT_FAILURE, UNSAID, Blame, Cause, Outcome, Shared, Stage, Trouble
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


def with_found_tag(data: Plain, where: str) -> Plain:
    """An image's fields, given the tag it was found under when an older report said it in
    `found_as` only."""
    found_as = data.get("found_as")
    if "found_tag" in data or not isinstance(found_as, str):
        return data
    return {**data, "found_tag": found_as.removeprefix("tag ") if found_as.startswith("tag ") else ""}


def with_install_kind(data: Plain, where: str) -> Plain:
    """A driver's packaging, given how its install went when an older report said it in
    `install`'s words only (`failed: why` then keeps the why)."""
    install = data.get("install")
    if "install_kind" in data or not isinstance(install, str):
        return data
    if install.startswith("failed"):
        return {**data, "install": install.removeprefix("failed").lstrip(": "), "install_kind": "failed"}
    kind = "source" if install.startswith("built from source") else "installed" if install else "not-yet"
    return {**data, "install_kind": kind}


_REGISTRY_NOTE = re.compile(r"^registry (?P<registry>\S+): ")


def with_note_objects(data: Plain, where: str) -> Plain:
    """A report's fields, its notes as objects when an older report wrote them as bare text
    (one about a registry not asked then said so in its words only)."""
    notes = data.get("notes")
    if not isinstance(notes, list):
        return data
    return {**data, "notes": [_note(n) if isinstance(n, str) else n for n in notes]}


def _note(text: str) -> Plain:
    found = _REGISTRY_NOTE.match(text)
    return {"text": text, "about": to_plain(Trouble(Shared.REGISTRY, found["registry"])) if found else None}
