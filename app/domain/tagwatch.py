"""The tag watch's data (pure): what one check saw of an image reference, and what the
history keeps of it, one record per reference and arch. The registry fills `TagSeen`,
`judge/` compares it with the records and says what changed, the migration plan reads the
records for the date an arch became published."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArchImage:
    """One arch of a tag as its registry publishes it now."""

    arch: str
    digest: str  # the arch's own manifest (the index entry's digest, or the single manifest's)
    published: str = ""  # its config's `created`, else the index's annotation (its entry's, then its own)


@dataclass(frozen=True)
class NewerTag:
    """Another tag of the same line that publishes an arch the watched tag lacks."""

    arch: str
    tag: str
    same_version: bool  # True: the same version under another name (`use`); False: a newer version (`upgrade`)


@dataclass(frozen=True)
class TagSeen:
    """An image reference as one check saw it: its arches, or why it could not be asked."""

    reference: str  # as the matrix writes it
    arches: tuple[ArchImage, ...] = ()
    published: str = ""  # the index's `org.opencontainers.image.created` annotation
    newer: tuple[NewerTag, ...] = ()
    searched: tuple[str, ...] = ()  # the lacking arches whose other tags were searched this time
    found: bool = True  # False: the registry has no such tag
    registry: str = ""  # the registry that failed (with `error`)
    error: str = ""  # the registry could not be asked: nothing is judged of this reference

    def arch(self, name: str) -> ArchImage | None:
        return next((a for a in self.arches if a.arch == name), None)


@dataclass(frozen=True)
class TagRecord:
    """What the history keeps of one reference and arch (one record each)."""

    reference: str
    arch: str
    digest: str  # "" while the tag does not publish the arch
    first_seen: str  # when the watch first saw the tag publish it (this time); UTC, ISO 8601
    changed_at: str  # when the watch first saw this digest (or the arch's absence)
    last_seen: str  # the last check that saw the reference
    published: str = ""  # the image config's `created`, when it says one
    baseline: bool = False  # seen at the reference's first check: published at least since first_seen
    upgrade: str = ""  # the other tag said to publish the arch (so it is news once)
    upgrade_same: bool = False  # that tag is the same version under another name
    searched_at: str = ""  # when other tags were last searched for the arch (once a day at most)
    behind_since: str = ""  # when this arch was first said behind another (so it is news once)

    @property
    def published_now(self) -> bool:
        return bool(self.digest)
