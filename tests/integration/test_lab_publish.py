"""The lab's indexes list every arch the registry holds, whichever build writes them last
(app/lab/publish.py), against a real registry (Debian's docker-registry, a test-owned one,
no engine): `make demo` builds the native arch, then the emulated one in the background,
and the second, partial build once wrote indexes of its own arch only (the stand-in's
`debian:trixie-slim` listed arm64 alone after a demo). The lab's own split build, through
the stand-in's default matrix, is test_stand_in.py's."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ecoready.lab.oci_writer import IndexEntry, RegistryWriter
from ecoready.lab.publish import write_index
from tests.support.registry_servers import Registry, push_tiny_image, start_registry

ARCHES = ("amd64", "arm64")


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    storage = tmp_path / "storage"
    storage.mkdir()
    registry = start_registry(tmp_path, storage)
    yield registry
    registry.stop()


def listed(writer: RegistryWriter, repo: str, tag: str) -> list[str]:
    index = writer.manifest(repo, tag)
    assert index is not None and index.is_index, index
    return [entry["platform"]["architecture"] for entry in index.json["manifests"]]


def test_the_second_arch_s_build_keeps_the_first_arch_in_the_index(registry: Registry) -> None:
    writer = RegistryWriter(registry.url)
    try:
        targets = [("lab/thing", "1"), ("hub/library/thing", "1")]
        push_tiny_image(writer, "amd64/thing", "1", "amd64")  # the native build, first
        assert write_index(writer, "thing", "1", ARCHES, targets) == ["amd64"]
        push_tiny_image(writer, "arm64/thing", "1", "arm64")  # the emulated one, later and alone
        assert write_index(writer, "thing", "1", ARCHES, targets) == ["amd64", "arm64"]
        for repo, tag in targets:
            assert listed(writer, repo, tag) == ["amd64", "arm64"]
    finally:
        writer.close()


class OtherBuildMeanwhile(RegistryWriter):
    """A writer during whose first index write another build publishes its arch: the
    index this writer is putting was made from the arches present before."""

    def put_index(self, repo: str, tag: str, entries: Sequence[IndexEntry], *, oci: bool = False) -> str:
        if self.manifest("arm64/thing", "1") is None:
            push_tiny_image(self, "arm64/thing", "1", "arm64")
        return super().put_index(repo, tag, entries, oci=oci)


def test_an_arch_published_while_the_index_is_written_is_not_lost(registry: Registry) -> None:
    writer = OtherBuildMeanwhile(registry.url)
    try:
        push_tiny_image(writer, "amd64/thing", "1", "amd64")
        assert write_index(writer, "thing", "1", ARCHES, [("lab/thing", "1")]) == ["amd64", "arm64"]
        assert listed(writer, "lab/thing", "1") == ["amd64", "arm64"]
    finally:
        writer.close()


class CountingPuts(RegistryWriter):
    def __init__(self, base: str) -> None:
        super().__init__(base)
        self.puts: list[tuple[str, str]] = []

    def put_manifest(self, repo: str, reference: str, media_type: str, body: bytes) -> str:
        self.puts.append((repo, reference))
        return super().put_manifest(repo, reference, media_type, body)


def test_publishing_what_the_registry_holds_again_writes_nothing(registry: Registry) -> None:
    # the registry rewrites a tag's link on every put, and a reader meeting it mid-write
    # gets a 500: `make demo`'s first run did, while the next wave's build published the
    # same indexes again
    writer = CountingPuts(registry.url)
    try:
        targets = [("lab/thing", "1"), ("hub/library/thing", "1")]
        push_tiny_image(writer, "amd64/thing", "1", "amd64")
        push_tiny_image(writer, "arm64/thing", "1", "arm64")
        writer.puts.clear()
        assert write_index(writer, "thing", "1", ARCHES, targets) == ["amd64", "arm64"]
        first = list(writer.puts)
        assert ("lab/thing", "1") in first and ("hub/library/thing", "1") in first
        writer.puts.clear()
        assert write_index(writer, "thing", "1", ARCHES, targets) == ["amd64", "arm64"]
        assert writer.puts == []  # neither the indexes nor the image manifests copied into them
        for repo, tag in targets:
            assert listed(writer, repo, tag) == ["amd64", "arm64"]
    finally:
        writer.close()
