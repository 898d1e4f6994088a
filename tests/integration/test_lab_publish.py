"""The lab's indexes list every arch the registry holds, whichever build writes them last
(app/lab/publish.py), against a real registry (Debian's docker-registry, a test-owned one,
no engine): `make demo` builds the native arch, then the emulated one in the background,
and the second, partial build once wrote indexes of its own arch only (the stand-in's
`debian:trixie-slim` listed arm64 alone after a demo). The lab's own split build, through
the stand-in's default matrix, is test_stand_in.py's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.lab.oci_writer import RegistryWriter
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

    def put_index(self, *args: object, **kwargs: object) -> str:
        if self.manifest("arm64/thing", "1") is None:
            push_tiny_image(self, "arm64/thing", "1", "arm64")
        return super().put_index(*args, **kwargs)  # type: ignore[arg-type]


def test_an_arch_published_while_the_index_is_written_is_not_lost(registry: Registry) -> None:
    writer = OtherBuildMeanwhile(registry.url)
    try:
        push_tiny_image(writer, "amd64/thing", "1", "amd64")
        assert write_index(writer, "thing", "1", ARCHES, [("lab/thing", "1")]) == ["amd64", "arm64"]
        assert listed(writer, "lab/thing", "1") == ["amd64", "arm64"]
    finally:
        writer.close()
