"""Where the lab's stand-ins publish an image's upstream names: Docker Hub's under `hub/`,
Oracle's registry's under `oracle/`, and no upstream name twice."""

from __future__ import annotations

import pytest

from ecoready.lab.recipes import IMAGES, STAND_INS, stand_in_repository


@pytest.mark.parametrize(
    ("upstream", "where"),
    [
        ("library/mysql", "hub/library/mysql"),
        ("percona/percona-toolkit", "hub/percona/percona-toolkit"),
        ("docker.io/library/haproxy", "hub/library/haproxy"),
        ("container-registry.oracle.com/mysql/community-router", "oracle/mysql/community-router"),
    ],
)
def test_an_upstream_repository_lands_in_its_registrys_stand_in(upstream: str, where: str) -> None:
    assert stand_in_repository(upstream) == where


def test_a_registry_without_a_stand_in_is_refused() -> None:
    with pytest.raises(KeyError):
        stand_in_repository("ghcr.io/owner/name")


def test_every_upstream_name_is_published_by_one_image_only() -> None:
    names = [(stand_in_repository(repo), tag) for image in IMAGES for repo, tag in image.upstream]
    assert len(names) == len(set(names))
    assert {name.split("/", 1)[0] for name, _ in names} <= set(STAND_INS.values())
