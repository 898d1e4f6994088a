"""Registry mirrors per registry, against real registries (Debian's docker-registry on free
loopback ports, tiny images of the test's own; no engine): a host-style mirror (the same
repository paths on another host) and a prefix-style one (a Harbor proxy project's path
before them) answer for their upstream registry, reports keep the reference the matrix
wrote and say which mirror answered; a mirror that lacks an image is the mirror's gap
(`error` naming the mirror, cause `mirror-gap`), never the component's `missing`, unless
the user lets ecoready fall back to the upstream registry; the environment sets mirrors for
CI; the old `[registry] mirror` still serves every registry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ecoready.domain.blame import Cause
from ecoready.domain.errors import MirrorGap, RegistryError
from ecoready.domain.images import Verdict
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.matrix.document import Mirror
from ecoready.registry.client import RegistryClient
from tests.support.cli import ecoready
from tests.support.registry_servers import Registry, push_tiny_image, push_tiny_index, start_registry


@dataclass
class Registries:
    upstream: Registry  # stands for a public registry (ghcr.io, say): reachable here
    mirror: Registry  # the site's mirror: Docker Hub's images host style, the upstream's under up/


@pytest.fixture(scope="module")
def registries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registries]:
    work = tmp_path_factory.mktemp("mirrors")
    made = []
    for name in ("upstream", "mirror"):
        (work / name).mkdir()
        made.append(start_registry(work, work / name))
    upstream, mirror = made
    writer = RegistryWriter(upstream.url)
    try:
        push_tiny_index(writer, "acme/app", "1")  # both arches upstream
        push_tiny_index(writer, "acme/only-upstream", "2")  # the mirror never copied it
    finally:
        writer.close()
    writer = RegistryWriter(mirror.url)
    try:
        push_tiny_index(writer, "library/mysql", "8.4")  # docker.io's mysql:8.4, host style
        push_tiny_index(writer, "hub/library/mariadb", "11.8")  # docker.io's mariadb:11.8 under a prefix
        push_tiny_index(writer, "up/acme/app", "1")  # the upstream's acme/app:1, prefix style
        push_tiny_image(writer, "up/acme/one-arch", "1", "amd64")  # a copy of one arch only
    finally:
        writer.close()
    writer = RegistryWriter(upstream.url)
    try:
        push_tiny_index(writer, "acme/one-arch", "1")
    finally:
        writer.close()
    yield Registries(upstream, mirror)
    for registry in made:
        registry.stop()


def client(*mirrors: Mirror, fallback: bool = False) -> RegistryClient:
    return RegistryClient(mirrors=mirrors, fallback=fallback, cache=False)


async def test_a_host_style_mirror_answers_for_docker_hub(registries: Registries) -> None:
    mirror = Mirror("docker.io", registries.mirror.host)
    async with client(mirror) as c:
        found = await c.resolve("mysql:8.4", "arm64")
    assert found.verdict is Verdict.AVAILABLE
    assert found.reference == "mysql:8.4"  # as the matrix wrote it
    assert (found.registry, found.mirror) == (registries.mirror.host, registries.mirror.host)
    assert found.pull_reference.startswith(f"{registries.mirror.host}/library/mysql@sha256:")


async def test_a_prefix_style_mirror_answers_for_its_registry_only(registries: Registries) -> None:
    up = registries.upstream.host
    hub = Mirror("docker.io", registries.mirror.host, "hub")
    proxy = Mirror(up, registries.mirror.host, "up")
    async with client(hub, proxy) as c:
        mariadb = await c.resolve("mariadb:11.8", "amd64")
        app = await c.resolve(f"{up}/acme/app:1", "arm64")
        assert c.mirror_for("quay.io") is None  # a registry without a mirror is asked itself
    assert mariadb.verdict is Verdict.AVAILABLE and mariadb.mirror == f"{registries.mirror.host}/hub"
    assert mariadb.pull_reference.startswith(f"{registries.mirror.host}/hub/library/mariadb@sha256:")
    assert app.verdict is Verdict.AVAILABLE and app.mirror == f"{registries.mirror.host}/up"
    assert app.pull_reference.startswith(f"{registries.mirror.host}/up/acme/app@sha256:")


async def test_a_mirror_that_lacks_an_image_is_the_mirrors_gap_never_missing(registries: Registries) -> None:
    up = registries.upstream.host
    proxy = Mirror(up, registries.mirror.host, "up")
    async with client(proxy) as c:
        with pytest.raises(MirrorGap) as caught:
            await c.resolve(f"{up}/acme/only-upstream:2", "amd64")
    gap = caught.value
    assert gap.cause is Cause.MIRROR_GAP and gap.registry == f"{registries.mirror.host}/up"
    assert f"{registries.mirror.host}/up/acme/only-upstream:2: repository not found" in gap.reason
    assert f"this mirror of {up} lacks it" in gap.reason


async def test_with_fallback_the_upstream_answers_what_the_mirror_lacks(registries: Registries) -> None:
    up = registries.upstream.host
    proxy = Mirror(up, registries.mirror.host, "up")
    async with client(proxy, fallback=True) as c:
        found = await c.resolve(f"{up}/acme/only-upstream:2", "arm64")
        one_arch = await c.resolve(f"{up}/acme/one-arch:1", "arm64")
        served = await c.resolve(f"{up}/acme/app:1", "arm64")
    assert found.verdict is Verdict.AVAILABLE and (found.registry, found.mirror) == (up, "")
    assert found.pull_reference.startswith(f"{up}/acme/only-upstream@sha256:")
    assert f"the mirror {registries.mirror.host}/up was passed by: it lacks the image; asked {up}" in found.detail
    # the mirror copied amd64 only: the upstream publishes arm64, and says so
    assert one_arch.verdict is Verdict.AVAILABLE and one_arch.registry == up
    assert "it lacks arm64" in one_arch.detail
    assert served.mirror == f"{registries.mirror.host}/up"  # what the mirror holds still comes from it


async def test_with_fallback_an_upstream_that_does_not_answer_is_an_error_saying_both(registries: Registries) -> None:
    nowhere = "127.0.0.1:9"  # nothing listens: the upstream cannot be asked
    async with client(Mirror(nowhere, registries.mirror.host, "up"), fallback=True) as c:
        with pytest.raises(RegistryError) as caught:
            await c.resolve(f"{nowhere}/acme/only-upstream:2", "amd64")
    assert caught.value.registry == nowhere and not isinstance(caught.value, MirrorGap)
    assert "unreachable" in caught.value.reason
    assert f"(asked because the mirror {registries.mirror.host}/up: it lacks the image)" in caught.value.reason


async def test_without_fallback_an_arch_the_mirror_lacks_says_it_is_the_mirrors_answer(
    registries: Registries,
) -> None:
    up = registries.upstream.host
    async with client(Mirror(up, registries.mirror.host, "up")) as c:
        found = await c.resolve(f"{up}/acme/one-arch:1", "arm64")
    assert found.verdict is Verdict.MISSING
    assert found.detail.endswith(f"(as the mirror {registries.mirror.host}/up serves it)")


def matrix(tmp_path: Path, registry: str, *images: str) -> Path:
    rows = "".join(
        f'[[components]]\nid = "c{i}"\ncategory = "server"\nprobe = "server"\nimage = "{image}"\n\n'
        for i, image in enumerate(images)
    )
    path = tmp_path / "matrix.toml"
    path.write_text('profile = "smoke"\n' + registry + "\n" + rows)  # no sysbench image: these rows only
    return path


def images(path: Path, env: dict[str, str] | None = None) -> tuple[int, dict, str]:
    result = ecoready("images", "--matrix", str(path), "--json", "-", env=env)
    return result.returncode, json.loads(result.stdout), result.stderr


def test_images_through_mirrors_set_in_the_matrix(registries: Registries, tmp_path: Path) -> None:
    host, up = registries.mirror.host, registries.upstream.host
    path = matrix(
        tmp_path,
        f'[registry.mirrors]\n"docker.io" = "{host}/hub"\n"{up}" = "{host}/up"\n',
        "mariadb:11.8",
        f"{up}/acme/app:1",
        "mysql:8.4",  # not under the mirror's hub/ prefix: its gap
    )
    code, report, stderr = images(path, env={"XDG_CACHE_HOME": str(tmp_path)})
    rows = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert code == 3, stderr  # an image could not be checked: not all available, none missing
    for arch in ("amd64", "arm64"):
        assert rows[("c0", arch)]["verdict"] == "available" and rows[("c0", arch)]["mirror"] == f"{host}/hub"
        assert rows[("c0", arch)]["reference"] == "mariadb:11.8"
        assert rows[("c1", arch)]["verdict"] == "available" and rows[("c1", arch)]["mirror"] == f"{host}/up"
        gap = rows[("c2", arch)]
        assert gap["verdict"] == "error" and gap["mirror"] == f"{host}/hub"
        assert gap["detail"].startswith(f"mirror {host}/hub: {host}/hub/library/mysql:8.4: repository not found")
    assert "missing" not in report["summary"]
    table = ecoready("images", "--matrix", str(path), env={"XDG_CACHE_HOME": str(tmp_path)}).stdout
    assert f"index (mirror {host}/hub)" in table


def test_the_environment_sets_mirrors_for_ci(registries: Registries, tmp_path: Path) -> None:
    host, up = registries.mirror.host, registries.upstream.host
    path = matrix(tmp_path, f'[registry.mirrors]\n"docker.io" = "{host}/nowhere"\n', "mysql:8.4", "mariadb:11.8")
    env = {"XDG_CACHE_HOME": str(tmp_path), "ECOREADY_REGISTRY_MIRRORS": f"docker.io={host}, {up}={host}/up"}
    code, report, _ = images(path, env=env)  # mysql host style, mariadb not there: a gap
    assert code == 3
    rows = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert rows[("c0", "amd64")]["verdict"] == "available" and rows[("c0", "amd64")]["mirror"] == host
    assert rows[("c1", "amd64")]["verdict"] == "error"
    bad = ecoready("images", "--matrix", str(path), env={**env, "ECOREADY_REGISTRY_MIRRORS": "docker.io"})
    assert bad.returncode == 2
    assert "ECOREADY_REGISTRY_MIRRORS: entry 1 'docker.io' is not REGISTRY=HOST[/PREFIX]" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_old_single_mirror_still_serves_every_registry(registries: Registries, tmp_path: Path) -> None:
    host = registries.mirror.host
    path = matrix(tmp_path, f'[registry]\nmirror = "{host}/up"\n', "ghcr.io/acme/app:1")
    code, report, _ = images(path, env={"XDG_CACHE_HOME": str(tmp_path)})
    assert code == 0, report
    assert {c["mirror"] for c in report["checks"]} == {f"{host}/up"}
    assert {c["reference"] for c in report["checks"]} == {"ghcr.io/acme/app:1"}


@pytest.mark.docker
def test_a_runs_cell_whose_mirror_lacks_its_image_is_an_error_naming_the_mirror(
    registries: Registries, tmp_path: Path, no_leaks: None
) -> None:
    host = registries.mirror.host
    path = matrix(tmp_path, f'arches = ["amd64"]\n[registry.mirrors]\n"docker.io" = "{host}/nowhere"\n', "mysql:8.4")
    md = tmp_path / "r.md"
    args = ("run", "--headless", "--matrix", str(path), "--json", "-", "--md", str(md))
    result = ecoready(*args, env={"XDG_CACHE_HOME": str(tmp_path)})
    assert result.returncode == 3, result.stderr
    (cell,) = json.loads(result.stdout)["cells"]
    assert cell["status"] == "error"  # the mirror's gap, never the component's `missing`
    (stage,) = cell["stages"]
    assert stage["blame"]["cause"] == "mirror-gap" and stage["blame"]["subject"] == f"{host}/nowhere"
    assert f"{host}/nowhere/library/mysql:8.4: repository not found" in stage["detail"]
    said = md.read_text()
    assert f"mirror {host}/nowhere" in said and "copy it into the mirror" in said
