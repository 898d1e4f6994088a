"""The tag search of the migration plan against a real registry (Debian's docker-registry
on a free port, tiny images of the test's own): the tag list followed page by page, a
same-version tag found (`use`), the oldest newer version that publishes the arch found
(`upgrade to`), nothing found (`blocked`), the number of manifests bounded, and a second
search answered from what the first learned."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ecoready.lab.oci_writer import RegistryWriter
from ecoready.registry import client as client_module
from ecoready.registry.client import RegistryClient
from ecoready.registry.tag_search import newer, search_tags, variants, version_of
from tests.support.registry_servers import Registry, push_tiny_image, push_tiny_index, start_registry


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """acme/app: 1.0, 1.1 amd64 only; 1.2, 2.0, 2.1 both; 1.1-arm64v8 (arm64); 1.1-jammy
    (amd64); a floating `latest`. acme/old: 1 amd64 only, nothing newer. Each index's
    entries are also tagged `TAG-only-ARCH` (push_tiny_index), as some vendors do."""
    work = tmp_path_factory.mktemp("tags")
    storage = work / "storage"
    storage.mkdir()
    registry = start_registry(work, storage)
    writer = RegistryWriter(registry.url)
    try:
        for tag in ("1.0", "1.1", "1.1-jammy"):
            push_tiny_index(writer, "acme/app", tag, ("amd64",))
        for tag in ("1.2", "2.0", "2.1", "latest"):
            push_tiny_index(writer, "acme/app", tag)
        push_tiny_image(writer, "acme/app", "1.1-arm64v8", "arm64")
        push_tiny_index(writer, "acme/old", "1", ("amd64",))
    finally:
        writer.close()
    yield registry
    registry.stop()


def test_versions_and_candidates_in_order() -> None:
    assert version_of("10.11.6-jammy") == ((10, 11, 6), "-jammy")
    assert version_of("v2") == ((2,), "") and version_of("latest") is None
    tags = ["1.0", "1.1", "1.1-jammy", "1.1-arm64v8", "1.1-debug", "1.2", "2.0", "2.1", "latest", "2.0-jammy"]
    assert variants("1.1", tags, "arm64") == ["1.1-arm64v8", "1.1-debug", "1.1-jammy"]
    assert newer("1.1", tags) == ["2.1", "2.0", "1.2"]
    assert newer("1.1-jammy", tags) == ["2.0-jammy"]
    assert newer("latest", tags) == []


def test_only_next_pages_of_the_same_tag_list_are_followed() -> None:
    from ecoready.registry.client import _next_page

    link = '</v2/acme/app/tags/list?last=1.1&n=3>; rel="next"'
    assert _next_page(link, "acme/app") == "tags/list?last=1.1&n=3"
    assert _next_page('<https://other.example/v2/acme/app/tags/list?n=3>; rel="next"', "acme/app") == (
        "tags/list?n=3"  # asked of the same registry as the first page, never of the other host
    )
    assert _next_page('</v2/acme/other/tags/list?n=3>; rel="next"', "acme/app") is None
    assert _next_page('</v2/acme/app/manifests/x>; rel="next"', "acme/app") is None
    assert _next_page('</v2/acme/app/tags/list?n=3>; rel="prev"', "acme/app") is None
    assert _next_page("", "acme/app") is None


async def test_tag_lists_are_followed_page_by_page(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "TAGS_PAGE", 3)
    async with RegistryClient(cache=False) as client:
        tags = await client.tags(f"{registry.host}/acme/app:1.1")
        assert await client.tags(f"{registry.host}/acme/nothing:1") is None
    assert tags is not None
    # every tag the test pushed, and the per-arch tags push_tiny_index makes for its entries
    assert {"1.0", "1.1", "1.1-jammy", "1.1-arm64v8", "1.2", "2.0", "2.1", "latest"} <= set(tags)
    assert len(tags) == len(set(tags)) > 3


async def test_a_same_version_tag_that_publishes_the_arch_is_used_first(registry: Registry) -> None:
    async with RegistryClient(cache=False) as client:
        found = await search_tags(client, "app", f"{registry.host}/acme/app:1.1", "arm64")
    assert (found.use_tag, found.upgrade_to, found.error) == ("1.1-arm64v8", "", "")
    assert found.looked_at == 1 and found.tags_listed > 8


async def test_the_oldest_newer_version_with_the_arch_is_the_upgrade(registry: Registry) -> None:
    async with RegistryClient(cache=False) as client:
        found = await search_tags(client, "app", f"{registry.host}/acme/app:1.0", "arm64")
    # 1.0's one variant (1.0-only-amd64) lacks arm64; newest first 2.1, 2.0, 1.2 publish it,
    # 1.1 does not: the search stops there
    assert (found.use_tag, found.upgrade_to, found.error) == ("", "1.2", "")
    assert found.looked_at == 1 + 4


async def test_the_flavour_is_kept_and_nothing_found_is_said(registry: Registry) -> None:
    async with RegistryClient(cache=False) as client:
        jammy = await search_tags(client, "app", f"{registry.host}/acme/app:1.1-jammy", "arm64")
        old = await search_tags(client, "old", f"{registry.host}/acme/old:1", "arm64")
        gone = await search_tags(client, "gone", f"{registry.host}/acme/gone:1", "arm64")
    # 1.1-jammy-only-amd64 is its one variant, and no newer -jammy tag exists
    assert (jammy.use_tag, jammy.upgrade_to, jammy.looked_at) == ("", "", 1)
    assert (old.use_tag, old.upgrade_to, old.looked_at) == ("", "", 1)
    assert (gone.tags_listed, gone.error) == (0, "")


async def test_the_manifests_asked_are_bounded(registry: Registry) -> None:
    async with RegistryClient(cache=False) as client:
        found = await search_tags(client, "app", f"{registry.host}/acme/app:1.0", "arm64", budget=2)
    # the variant, then 2.1: the oldest of what it could look at
    assert (found.looked_at, found.upgrade_to) == (2, "2.1")


async def test_a_second_search_asks_the_registry_nothing_new(registry: Registry, tmp_path: Path) -> None:
    async with RegistryClient(cache=False) as client:
        first = await search_tags(client, "app", f"{registry.host}/acme/app:1.0", "arm64")
        before = registry.requests()
        again = await search_tags(client, "app", f"{registry.host}/acme/app:1.0", "arm64")
        assert registry.requests() == before
    assert again == first


async def test_a_registry_that_fails_ends_the_search_with_its_reason(tmp_path: Path) -> None:
    async with RegistryClient(cache=False) as client:
        found = await search_tags(client, "app", "127.0.0.1:9/acme/app:1", "arm64")
    assert found.error and "unreachable" in found.error and found.upgrade_to == ""
