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
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ecoready.domain.blame import Cause
from ecoready.domain.errors import MirrorBehind, MirrorDown, MirrorGap, RegistryError
from ecoready.domain.images import Verdict
from ecoready.lab.oci_writer import RegistryWriter
from ecoready.matrix.document import Mirror
from ecoready.registry.client import RegistryClient
from ecoready.registry.credentials import DockerCredentials
from tests.support.cli import ecoready
from tests.support.registry_servers import (
    Registry,
    free_port,
    htpasswd_auth,
    push_tiny_image,
    push_tiny_index,
    start_registry,
)


@dataclass
class Registries:
    upstream: Registry  # stands for a public registry (ghcr.io, say): reachable here
    mirror: Registry  # the site's mirror: Docker Hub's images host style, the upstream's under up/
    locked: Registry  # the same mirror behind a login ecoready has no credentials for


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
        push_tiny_index(writer, "acme/stale", "1")  # both arches upstream ...
        push_tiny_image(writer, "acme/amd-only", "1", "amd64")  # published for amd64 only, truly
    finally:
        writer.close()
    writer = RegistryWriter(mirror.url)
    try:
        push_tiny_index(writer, "up/acme/stale", "1", ("amd64",))  # ... a stale index on the mirror, without arm64
        push_tiny_image(writer, "up/acme/amd-only", "1", "amd64")
    finally:
        writer.close()
    # the same mirror's content behind a login (htpasswd) that ecoready has no credentials for
    locked = start_registry(work, work / "mirror", auth=htpasswd_auth(work, "site", "s3cret-pw"), readonly=True)
    made.append(locked)
    yield Registries(upstream, mirror, locked)
    for registry in made:
        registry.stop()


def client(*mirrors: Mirror, fallback: bool = False, work: Path | None = None) -> RegistryClient:
    # no docker config of the machine's: a login the test does not give is none
    credentials = DockerCredentials(work / "no-config.json") if work else DockerCredentials(Path("/nonexistent/c.json"))
    return RegistryClient(mirrors=mirrors, fallback=fallback, cache=False, credentials=credentials, deadline=3)


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
    # the mirror asked is named, and why the upstream answered instead is data
    assert found.verdict is Verdict.AVAILABLE and (found.registry, found.mirror) == (up, f"{registries.mirror.host}/up")
    assert found.fallback is Cause.MIRROR_GAP
    assert found.pull_reference.startswith(f"{up}/acme/only-upstream@sha256:")
    assert f"the mirror {registries.mirror.host}/up was passed by: it lacks the image; asked {up}" in found.detail
    # the mirror copied amd64 only: the upstream publishes arm64, and says so
    assert one_arch.verdict is Verdict.AVAILABLE and one_arch.registry == up
    assert one_arch.fallback is Cause.MIRROR_BEHIND and "its copy lacks arm64" in one_arch.detail
    assert served.mirror == f"{registries.mirror.host}/up" and served.fallback is None  # the mirror's own answer


async def test_with_fallback_an_upstream_that_does_not_answer_is_an_error_saying_both(registries: Registries) -> None:
    nowhere = "127.0.0.1:9"  # nothing listens: the upstream cannot be asked
    async with client(Mirror(nowhere, registries.mirror.host, "up"), fallback=True) as c:
        with pytest.raises(RegistryError) as caught:
            await c.resolve(f"{nowhere}/acme/only-upstream:2", "amd64")
    assert caught.value.registry == nowhere and not isinstance(caught.value, MirrorGap)
    assert (caught.value.mirror, caught.value.fallback) == (f"{registries.mirror.host}/up", Cause.MIRROR_GAP)
    assert "unreachable" in caught.value.reason
    assert f"(asked because the mirror {registries.mirror.host}/up: it lacks the image)" in caught.value.reason


async def test_a_stale_mirror_index_without_an_arch_the_upstream_publishes_is_the_mirror_behind(
    registries: Registries,
) -> None:
    up, mirror = registries.upstream.host, f"{registries.mirror.host}/up"
    async with client(Mirror(up, registries.mirror.host, "up")) as c:
        for image in ("acme/stale:1", "acme/one-arch:1"):  # an index without arm64, a copy of amd64 only
            with pytest.raises(MirrorBehind) as caught:
                await c.resolve(f"{up}/{image}", "arm64")
            behind = caught.value
            assert behind.cause is Cause.MIRROR_BEHIND and (behind.registry, behind.mirror) == (mirror, mirror)
            assert f"while {up} publishes arm64: the mirror is behind" in behind.reason
        served = await c.resolve(f"{up}/acme/stale:1", "amd64")  # what the copy holds is served from it
    assert served.verdict is Verdict.AVAILABLE and served.mirror == mirror


async def test_an_arch_neither_the_mirror_nor_its_upstream_has_is_the_components_missing_saying_both(
    registries: Registries,
) -> None:
    up, mirror = registries.upstream.host, f"{registries.mirror.host}/up"
    async with client(Mirror(up, registries.mirror.host, "up")) as c:
        found = await c.resolve(f"{up}/acme/amd-only:1", "arm64")
    assert found.verdict is Verdict.MISSING and found.mirror == mirror and found.fallback is None
    assert f"(as the mirror {mirror} serves it, and {up} publishes no arm64 either)" in found.detail


async def test_a_copy_without_the_arch_whose_upstream_cannot_say_is_the_mirrors_never_missing(
    registries: Registries,
) -> None:
    nowhere = f"127.0.0.1:{free_port()}"  # nothing listens: the upstream cannot confirm
    async with client(Mirror(nowhere, registries.mirror.host, "up")) as c:
        with pytest.raises(MirrorBehind) as caught:
            await c.resolve(f"{nowhere}/acme/amd-only:1", "arm64")
    assert caught.value.registry == f"{registries.mirror.host}/up"
    assert f"{nowhere} could not be asked whether it publishes arm64 (unreachable" in caught.value.reason


async def test_a_mirror_down_hanging_or_refusing_its_login_is_the_mirrors_trouble(
    registries: Registries, tmp_path: Path
) -> None:
    up = registries.upstream.host
    closed = f"127.0.0.1:{free_port()}"
    hanging = socket.socket()  # accepts connections (the backlog) and never answers
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(8)
    hung = f"127.0.0.1:{hanging.getsockname()[1]}"
    try:
        for host, words in (
            (closed, "unreachable"),
            (hung, "no answer"),
            (registries.locked.host, "asks for a login"),
        ):
            async with client(Mirror(up, host, "up"), work=tmp_path) as c:
                started = time.monotonic()
                with pytest.raises(MirrorDown) as caught:
                    await c.resolve(f"{up}/acme/app:1", "arm64")
            down = caught.value
            assert down.cause is Cause.MIRROR_DOWN and (down.registry, down.mirror) == (f"{host}/up", f"{host}/up")
            assert words in down.reason and f"(this mirror of {up})" in down.reason, down.reason
            assert str(down).startswith(f"mirror {host}/up: ")  # the mirror named, never the upstream
            assert time.monotonic() - started < 10
            async with client(Mirror(up, host, "up"), fallback=True, work=tmp_path) as c:
                found = await c.resolve(f"{up}/acme/app:1", "arm64")  # with fallback, the upstream answers
            assert found.verdict is Verdict.AVAILABLE and (found.registry, found.mirror) == (up, f"{host}/up")
            assert found.fallback is Cause.MIRROR_DOWN and "it could not be asked" in found.detail
    finally:
        hanging.close()


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
    _ = ecoready("images", "--matrix", str(path), env=env).stderr
    assert code == 3
    rows = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert rows[("c0", "amd64")]["verdict"] == "available" and rows[("c0", "amd64")]["mirror"] == host
    assert rows[("c1", "amd64")]["verdict"] == "error"
    # the matrix's docker.io mirror is replaced, and the run says so
    assert f"ecoready: note: ECOREADY_REGISTRY_MIRRORS sets the mirror of docker.io ({host}); the matrix's " in _
    bad = ecoready("images", "--matrix", str(path), env={**env, "ECOREADY_REGISTRY_MIRRORS": "docker.io"})
    assert bad.returncode == 2
    assert "ECOREADY_REGISTRY_MIRRORS: entry 1 is not REGISTRY=HOST[:PORT][/PREFIX] (no '=')" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("entries", "words"),
    [
        ("docker.io=site:pw-0f-the-site@{host}", "entry 1: the mirror holds credentials"),
        ("docker.io={host},docker.io=127.0.0.1:9", "entry 2: names the same registry as entry 1"),
        (f"docker.io={'x' * 64}.example", "entry 1: the mirror has a label (part 1 of its host name) of 64"),
        ("dock\x7fer.io={host}", "entry 1: the registry holds a control or invisible character (\\x7f)"),
        ("docker.io={host}\x1b", "entry 1: the mirror holds a control or invisible character (\\x1b)"),
    ],
)
def test_a_bad_mirror_variable_stops_the_verb_before_it_asks_anything(
    registries: Registries, tmp_path: Path, entries: str, words: str
) -> None:
    path = matrix(tmp_path, "", "mysql:8.4")
    before = registries.mirror.requests()
    env = {"XDG_CACHE_HOME": str(tmp_path), "ECOREADY_REGISTRY_MIRRORS": entries.format(host=registries.mirror.host)}
    started = time.monotonic()
    result = ecoready("images", "--matrix", str(path), env=env)
    assert result.returncode == 2 and time.monotonic() - started < 20
    assert result.stderr == f"ecoready: error: ECOREADY_REGISTRY_MIRRORS: {words}" + result.stderr.split(words, 1)[1]
    assert "pw-0f-the-site" not in result.stderr and "x" * 64 not in result.stderr and "\x1b" not in result.stderr
    assert registries.mirror.requests() == before  # nothing was asked


def test_images_names_the_mirror_on_every_row_blames_its_gaps_and_gives_its_remedy(
    registries: Registries, tmp_path: Path
) -> None:
    host, up = registries.mirror.host, registries.upstream.host
    path = matrix(
        tmp_path,
        f'[registry.mirrors]\n"{up}" = "{host}/up"\n',
        f"{up}/acme/stale:1",  # a stale index on the mirror: arm64 is the mirror's, never `missing`
        f"{up}/acme/only-upstream:2",  # not on the mirror
        f"{up}/acme/amd-only:1",  # amd64 only, upstream too: arm64 is the component's `missing`
    )
    code, report, stderr = images(path, env={"XDG_CACHE_HOME": str(tmp_path)})
    rows = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert {c["mirror"] for c in report["checks"]} == {f"{host}/up"}  # every row names the mirror asked
    assert {c["fallback"] for c in report["checks"]} == {None}
    assert rows[("c0", "amd64")]["verdict"] == "available"
    behind = rows[("c0", "arm64")]
    assert behind["verdict"] == "error" and behind["detail"].startswith(f"mirror {host}/up behind: ")
    assert f"while {up} publishes arm64: the mirror is behind" in behind["detail"]
    assert rows[("c1", "arm64")]["detail"].startswith(f"mirror {host}/up: {host}/up/acme/only-upstream:2: repository")
    assert (
        rows[("c2", "arm64")]["verdict"] == "missing"
        and f"{up} publishes no arm64 either" in rows[("c2", "arm64")]["detail"]
    )
    assert code == 3  # a mirror's trouble is the tool's infrastructure: no CI gate fails the component for it
    notes = report["notes"]
    assert any(
        n.startswith(f"mirror {host}/up is behind: 1 image: ") and "copy the image into the mirror again" in n
        for n in notes
    )
    gaps = (
        f"mirror {host}/up lacks it: 2 images: the mirror {host}/up lacks the image, not its publisher: copy the image"
    )
    assert any(n.startswith(f"{gaps} into the mirror") for n in notes), notes
    assert all("allow fallback" in n for n in notes if n.startswith("mirror "))
    assert "copy the image into the mirror" in stderr  # the notes are said with the table too

    env = {"XDG_CACHE_HOME": str(tmp_path), "ECOREADY_REGISTRY_FALLBACK": "true"}
    code, report, _ = images(path, env=env)
    rows = {(c["component"], c["arch"]): c for c in report["checks"]}
    assert (rows[("c0", "arm64")]["fallback"], rows[("c0", "arm64")]["registry"]) == ("mirror-behind", up)
    assert (rows[("c1", "amd64")]["fallback"], rows[("c1", "amd64")]["mirror"]) == ("mirror-gap", f"{host}/up")
    assert rows[("c0", "amd64")]["fallback"] is None  # what the mirror holds comes from it
    table = ecoready("images", "--matrix", str(path), env={**env, "COLUMNS": "250"}).stdout
    assert f"index ({up}: the mirror {host}/up was passed by, it lacks the image)" in table
    assert f"index (mirror {host}/up)" in table


def test_the_old_single_mirror_still_serves_every_registry(registries: Registries, tmp_path: Path) -> None:
    host = registries.mirror.host
    path = matrix(tmp_path, f'[registry]\nmirror = "{host}/up"\n', "ghcr.io/acme/app:1")
    code, report, _ = images(path, env={"XDG_CACHE_HOME": str(tmp_path)})
    assert code == 0, report
    assert {c["mirror"] for c in report["checks"]} == {f"{host}/up"}
    assert {c["reference"] for c in report["checks"]} == {"ghcr.io/acme/app:1"}


@pytest.mark.docker
def test_a_runs_cell_whose_mirror_lacks_its_image_or_is_down_is_an_error_naming_the_mirror(
    registries: Registries, tmp_path: Path, no_leaks: None
) -> None:
    host, up = registries.mirror.host, registries.upstream.host
    down = f"127.0.0.1:{free_port()}"  # nothing listens: the mirror is down, the upstream is fine
    table = f'arches = ["amd64"]\n[registry.mirrors]\n"docker.io" = "{host}/nowhere"\n"{up}" = "{down}"\n'
    path = matrix(tmp_path, table, "mysql:8.4", f"{up}/acme/app:1")
    md = tmp_path / "r.md"
    args = ("run", "--headless", "--matrix", str(path), "--json", "-", "--md", str(md))
    result = ecoready(*args, env={"XDG_CACHE_HOME": str(tmp_path)})
    assert result.returncode == 3, result.stderr
    cells = {c["component"]: c for c in json.loads(result.stdout)["cells"]}
    for cell in cells.values():
        assert cell["status"] == "error"  # the mirror's trouble, never the component's `missing`
    (gap,) = cells["c0"]["stages"]
    assert gap["blame"]["cause"] == "mirror-gap" and gap["blame"]["subject"] == f"{host}/nowhere"
    assert f"{host}/nowhere/library/mysql:8.4: repository not found" in gap["detail"]
    (dead,) = cells["c1"]["stages"]
    assert dead["blame"]["cause"] == "mirror-down" and dead["blame"]["subject"] == down  # never the upstream
    assert "unreachable" in dead["detail"] and f"(this mirror of {up})" in dead["detail"]
    said = md.read_text()
    assert f"mirror {host}/nowhere" in said and "copy the image into the mirror" in said and "allow fallback" in said
    assert f"mirror {down}" in said and "check its address, that it runs and answers" in said
