"""The tag watch's judgement (pure): one check's `TagSeen` against the history's records ->
the new records and the findings, each typed with its evidence; words last.

- `gained`: the tag publishes an arch it did not at the previous check;
- `lost`: it no longer publishes one it did (a regression: exit 1);
- `behind`: another arch's image was rebuilt (its digest changed) and this one's was not,
  for `behind_after` or longer (e.g. `arm64 of proxysql:3.0 is 9 days behind amd64`);
- `newer tag`: a watched arch the tag lacks is published by another tag of the same line
  (the same version under another name: use it; a newer version: upgrade).

`gained` and `lost` are news once, when they happen; `behind` and `newer tag` are states,
news the first time they are said (the record keeps that) and repeated after.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from ecoready.domain.tagwatch import ArchImage, TagRecord, TagSeen

Key = tuple[str, str]


class Change(str, enum.Enum):
    GAINED = "gained"
    LOST = "lost"
    BEHIND = "behind"
    NEWER_TAG = "newer tag"


@dataclass(frozen=True)
class TagFinding:
    change: Change
    reference: str
    arch: str
    since: str  # when it became true (UTC, ISO 8601)
    news: bool = True  # said for the first time by this check
    digest: str = ""  # gained, behind: the arch's digest now; lost: the digest it had
    other: str = ""  # behind: the arch that was rebuilt; newer tag: the tag
    other_digest: str = ""  # behind: that arch's digest now
    same_version: bool = False  # newer tag: the same version under another name
    days: float = 0.0  # behind: for how long (days, at this check)

    @property
    def regression(self) -> bool:
        return self.change is Change.LOST


@dataclass(frozen=True)
class Judged:
    records: dict[Key, TagRecord]
    findings: tuple[TagFinding, ...]
    first: tuple[str, ...]  # references this check saw for the first time (recorded, nothing to compare)
    unchecked: tuple[TagSeen, ...]  # references the registry could not be asked about
    absent: tuple[str, ...] = ()  # references whose registry has no such tag (now)


def stamp(at: datetime) -> str:
    return at.isoformat(timespec="seconds").replace("+00:00", "Z")


def when(at: str) -> datetime:
    """A time the watch wrote (`stamp`)."""
    return datetime.fromisoformat(at.replace("Z", "+00:00"))


def judge(
    records: Mapping[Key, TagRecord],
    seen: Iterable[TagSeen],
    watched: Sequence[str],
    now: datetime,
    behind_after: timedelta,
) -> Judged:
    """The records after this check (`now`: when it asked the registries), and what it
    found. A reference a later check has judged already (checks that overlapped, this one
    waiting for the lock) is left to that one: its records are newer than what this saw."""
    out = dict(records)
    findings: list[TagFinding] = []
    first: list[str] = []
    unchecked: list[TagSeen] = []
    seen = tuple(seen)
    for one in seen:
        if one.error:
            unchecked.append(one)
            continue
        prior = {arch: r for (ref, arch), r in records.items() if ref == one.reference}
        if any(when(r.last_seen) > now for r in prior.values()):
            continue
        if not prior:
            first.append(one.reference)
        mine = _reference(one, prior, watched, stamp(now), findings)
        mine = _behind(mine, now, behind_after, findings)
        out.update({(one.reference, r.arch): r for r in mine.values()})
    absent = tuple(one.reference for one in seen if not one.error and not one.found)
    return Judged(out, tuple(findings), tuple(first), tuple(unchecked), absent)


def _reference(
    one: TagSeen, prior: Mapping[str, TagRecord], watched: Sequence[str], now: str, findings: list[TagFinding]
) -> dict[str, TagRecord]:
    baseline = not prior
    arches = dict.fromkeys([*(a.arch for a in one.arches), *watched, *prior])
    mine: dict[str, TagRecord] = {}
    for arch in arches:
        image = one.arch(arch)
        old = prior.get(arch)
        if image is not None:
            mine[arch] = _published(one.reference, image, old, now, baseline, findings)
        elif old is not None or arch in watched:
            record = _absent(one.reference, arch, old, now, baseline, findings)
            mine[arch] = _newer(one, record, arch in watched, now, findings)
    return mine


def _published(
    reference: str, image: ArchImage, old: TagRecord | None, now: str, baseline: bool, findings: list[TagFinding]
) -> TagRecord:
    if old is None or not old.published_now:
        if not baseline:
            findings.append(TagFinding(Change.GAINED, reference, image.arch, now, digest=image.digest))
        return TagRecord(reference, image.arch, image.digest, now, now, now, image.published, baseline)
    if old.digest != image.digest:  # rebuilt: the arch is no longer behind
        return replace(
            old, digest=image.digest, changed_at=now, last_seen=now, published=image.published, behind_since=""
        )
    return replace(old, last_seen=now, published=image.published or old.published)


def _absent(
    reference: str, arch: str, old: TagRecord | None, now: str, baseline: bool, findings: list[TagFinding]
) -> TagRecord:
    if old is None:
        return TagRecord(reference, arch, "", "", now, now, baseline=baseline)
    if old.published_now:
        findings.append(TagFinding(Change.LOST, reference, arch, now, digest=old.digest))
        return replace(old, digest="", first_seen="", changed_at=now, last_seen=now, published="", baseline=False)
    return replace(old, last_seen=now, behind_since="")


def _newer(one: TagSeen, record: TagRecord, watched: bool, now: str, findings: list[TagFinding]) -> TagRecord:
    """A watched arch the tag lacks: the other tag this check's search found, or, when it
    was not searched this time (`--search-every`), the last search's answer, said again."""
    if not watched:
        return replace(record, upgrade="", searched_at="")
    if record.arch in one.searched:
        other = next((n for n in one.newer if n.arch == record.arch), None)
        tag, same = (other.tag, other.same_version) if other is not None else ("", False)
        news = tag != record.upgrade
        record = replace(record, upgrade=tag, upgrade_same=same, searched_at=now)
    else:
        news = False
    if record.upgrade:
        finding = TagFinding(
            Change.NEWER_TAG,
            one.reference,
            record.arch,
            record.changed_at,  # the tag lacks the arch since
            news=news,
            other=record.upgrade,
            same_version=record.upgrade_same,
        )
        findings.append(finding)
    return record


def _behind(
    mine: dict[str, TagRecord], now: datetime, behind_after: timedelta, findings: list[TagFinding]
) -> dict[str, TagRecord]:
    """Each published arch whose image predates another arch's current one, since that one
    was rebuilt `behind_after` ago or longer. Predates: the watch saw the other's digest
    change and not this one's, or (both configs dated) this one was built `behind_after`
    or more before the other."""
    live = [r for r in mine.values() if r.published_now]
    if len(live) < 2:
        return mine
    ahead = max(live, key=lambda r: (when(r.changed_at), rebuilt(r)))
    since = rebuilt(ahead)
    out = dict(mine)
    for record in live:
        if record is ahead or now - since < behind_after or not _predates(record, ahead, behind_after):
            continue
        finding = TagFinding(
            Change.BEHIND,
            record.reference,
            record.arch,
            stamp(since),
            news=not record.behind_since,
            digest=record.digest,
            other=ahead.arch,
            other_digest=ahead.digest,
            days=round((now - since).total_seconds() / 86400, 2),
        )
        findings.append(finding)
        out[record.arch] = replace(record, behind_since=record.behind_since or stamp(now))
    return out


def _predates(record: TagRecord, ahead: TagRecord, behind_after: timedelta) -> bool:
    if when(record.changed_at) < when(ahead.changed_at):
        return True
    mine, theirs = dated(record.published), dated(ahead.published)
    return mine is not None and theirs is not None and theirs - mine >= behind_after


def dated(text: str) -> datetime | None:
    """A registry's timestamp (`2026-12-05T10:00:00.123456789Z`), in UTC; None when it is none."""
    if not text:
        return None
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def rebuilt(record: TagRecord) -> datetime:
    """When the arch's current image was made: its config's `created`, else when the watch
    first saw its digest."""
    return dated(record.published) or when(record.changed_at)


def searched_recently(records: Mapping[Key, TagRecord], now: datetime, every: timedelta) -> dict[str, set[str]]:
    """Per reference, the lacking arches whose other tags were searched less than `every`
    ago: this check need not search them again (a tag list and up to a dozen manifests
    each)."""
    out: dict[str, set[str]] = {}
    for (reference, arch), record in records.items():
        if not record.published_now and record.searched_at and now - when(record.searched_at) < every:
            out.setdefault(reference, set()).add(arch)
    return out


def exit_code(judged: Judged) -> int:
    """1 when a tag lost an arch; else 3 when a registry could not be asked; else 0."""
    if any(f.regression for f in judged.findings):
        return 1
    return 3 if judged.unchecked else 0


def published_since(records: Mapping[Key, TagRecord]) -> dict[Key, tuple[str, bool]]:
    """(reference, arch) -> (since when the tag publishes it, whether that is only since the
    watch's first look at the reference), for the migration plan's pins."""
    return {key: (r.first_seen, r.baseline) for key, r in records.items() if r.published_now}
