"""Images on one engine: pulled by digest (with an idle watchdog), inspected, and for the
lab built, tagged, pushed and read from."""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import os
import posixpath
import re
import socket
import tarfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import docker.auth
import docker.errors

from ecoready.domain.errors import DeadlineExceeded, EngineError, PullStalled
from ecoready.domain.model import normalize_arch
from ecoready.domain.specs import ImageFile
from ecoready.engine.aio import remove_when_made, to_the_end
from ecoready.engine.podman import ulimits
from ecoready.engine.sdk import CONTROL_TIMEOUT, Sdk

# A pull with no progress message for this long has stalled (env: seconds).
PULL_IDLE_TIMEOUT = float(os.environ.get("ECOREADY_PULL_IDLE_TIMEOUT", "120"))
COMMIT_TIMEOUT = 600.0  # a container of a source build is GiBs: minutes on a busy machine
REMOVE_TIMEOUT = 300.0  # removing such a container
T = TypeVar("T")
# Go's os.FileMode type bits, as the archive API's path stat reports them
_MODE_SYMLINK = 1 << 27
_MODE_NOT_REGULAR = (1 << 31) | _MODE_SYMLINK | (1 << 26) | (1 << 25) | (1 << 24) | (1 << 21) | (1 << 19)
MAX_LINKS = 8  # symlinks followed for one path
_LOOP = re.compile(r"too many (levels of )?(symbolic )?links|symlink loop|ELOOP", re.IGNORECASE)


class EngineImages:
    """The image calls of one engine (`DockerHost.images`)."""

    def __init__(self, sdk: Sdk, *, podman: bool = False) -> None:
        self._sdk = sdk
        self._ulimits = ulimits() if podman else None  # see engine/podman.py

    # -- images ----------------------------------------------------------------------
    async def pull(
        self,
        reference: str,
        platform: str,
        *,
        idle_timeout: float = PULL_IDLE_TIMEOUT,
        on_progress: Callable[[str], None] | None = None,
    ) -> str:
        """Pull `reference` (repo@digest or repo:tag) for `platform`; return the image id.

        An idle watchdog ends a pull that sends no progress message for `idle_timeout`
        seconds as PullStalled: docker-py reads pull streams with the socket timeout off, so
        the watchdog shuts the stream's socket down to free the reading thread.
        """
        repo, _, digest = reference.partition("@")
        tag = digest or None
        if not digest:
            repo, tag = _split_tag(reference)
        # docker-py's private request helpers, which types-docker does not declare
        api: Any = self._sdk.streams.api
        last = [time.monotonic()]
        sockets: list[Any] = []

        def work() -> str:
            params = {"tag": tag, "fromImage": repo, "platform": platform}
            headers = {}
            registry, _ = docker.auth.resolve_repository_name(repo)
            auth_header = docker.auth.get_config_header(api, registry)
            if auth_header:
                headers["X-Registry-Auth"] = auth_header
            # docker-py's own pull, step by step, to get hold of the stream's socket
            response = api._post(api._url("/images/create"), params=params, headers=headers, stream=True, timeout=None)
            api._raise_for_status(response)
            sockets.append(api._get_raw_response_socket(response))
            try:
                for message in api._stream_helper(response, decode=True):
                    last[0] = time.monotonic()
                    if "error" in message:
                        raise docker.errors.APIError(str(message.get("error")))
                    if on_progress and message.get("status"):
                        on_progress(str(message["status"]))
            finally:
                response.close()
            return str(self._sdk.control.images.get(reference).id)

        future = self._sdk.submit(work)
        try:
            while True:
                done, _ = await asyncio.wait({future}, timeout=min(1.0, idle_timeout / 4))
                if done:
                    return await self._sdk.wait(future, None)
                if time.monotonic() - last[0] > idle_timeout:
                    _shutdown(sockets)
                    raise PullStalled(f"pull stalled: no progress for {idle_timeout:.0f} s")
        except asyncio.CancelledError:
            _shutdown(sockets)
            raise

    async def image_platform(self, image: str) -> tuple[str, str]:
        """(os, arch) recorded in a local image."""

        def read() -> tuple[str, str]:
            attrs = self._sdk.control.images.get(image).attrs
            return str(attrs.get("Os", "")), normalize_arch(str(attrs.get("Architecture", ""))) or ""

        return await self._sdk.call(read, what=f"reading the platform of {image}")

    async def image_labels(self, reference: str) -> dict[str, str] | None:
        """Labels of a local image, or None when the host does not have it."""

        def read() -> dict[str, str] | None:
            try:
                attrs = self._sdk.control.images.get(reference).attrs
            except docker.errors.ImageNotFound:
                return None
            return dict((attrs.get("Config") or {}).get("Labels") or {})

        return await self._sdk.call(read, what=f"reading the labels of {reference}")

    async def image_id(self, reference: str) -> str:
        return await self._sdk.call(
            lambda: str(self._sdk.control.images.get(reference).id), what=f"reading the id of {reference}"
        )

    async def build(
        self,
        context: str,
        tag: str,
        platform: str,
        *,
        buildargs: Mapping[str, str],
        labels: Mapping[str, str],
        log: Callable[[str], None],
        timeout: float,
    ) -> str:
        """`docker build` (classic builder) for a platform; the image id. Output goes to `log`.
        Its RUN steps use the host's network, as the lab's debootstrap does: a build then
        needs no bridge or NAT of the engine's (an engine of its own, as bench/lab_build.py
        starts, has neither)."""

        def work() -> str:
            image_id = ""
            for message in self._sdk.streams.api.build(
                path=context,
                tag=tag,
                platform=platform,
                buildargs=dict(buildargs),
                labels=dict(labels),
                rm=True,
                forcerm=True,
                decode=True,
                pull=False,
                network_mode="host",
            ):
                if "stream" in message:
                    log(str(message["stream"]))
                if "error" in message:
                    raise EngineError(f"build of {tag} failed: {str(message['error']).strip()[:300]}")
                aux = message.get("aux") or {}
                if "ID" in aux:
                    image_id = str(aux["ID"])
            return image_id or str(self._sdk.streams.images.get(tag).id)

        return await self._sdk.call(work, timeout=timeout, what=f"the build of {tag}")

    async def copy_from_image(self, image: str, path: str, *, labels: Mapping[str, str], timeout: float = 300) -> bytes:
        """A tar archive of `path` inside `image`, read from a container that is created but
        never started (no network, no process), and removed before this returns."""

        def work() -> bytes:
            # every call of it through the streams client: on a busy engine creating the
            # container of a large image takes longer than a control call may
            created = self._sdk.streams.api.create_container(
                image=image,
                command=["/nonexistent"],  # never runs: the container is never started
                labels=dict(labels),
                host_config=self._sdk.streams.api.create_host_config(network_mode="none"),
            )
            container_id = str(created["Id"])
            try:
                stream, _stat = self._sdk.streams.api.get_archive(container_id, path)
                return b"".join(stream)
            finally:
                self._sdk.streams.api.remove_container(container_id, force=True, v=True)

        # a read changes nothing: retried once when its deadline runs out
        return await self._once_more(work, timeout, f"reading {path} out of {image}")

    async def run_to_end(
        self,
        image: str,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        binds: Sequence[str],
        labels: Mapping[str, str],
        log: Callable[[str], None],
        timeout: float,
    ) -> int:
        """Run a one-off container of a local image to its end, its output into `log`; its
        exit code. `binds`: docker's `source:target[:ro]`. Like a build's RUN step it uses the
        host's network (see `build`). Removed however this ends (a deadline, a cancel)."""
        api = self._sdk.control.api

        def create() -> str:
            host_config = api.create_host_config(network_mode="host", binds=list(binds), ulimits=self._ulimits)
            created = api.create_container(
                image=image, command=list(command), environment=dict(env), labels=dict(labels), host_config=host_config
            )
            return str(created["Id"])

        async def remove(container_id: str) -> None:
            # a one-off container of an install is GiBs: removing it takes a busy engine long
            await self._sdk.call(
                lambda: self._sdk.streams.api.remove_container(container_id, force=True, v=True),
                timeout=REMOVE_TIMEOUT,
                what=f"removing the container of {image} that ran {what}",
            )

        what = " ".join(command)[:60]
        created = self._sdk.submit(create)
        try:
            container_id = await self._sdk.wait(
                asyncio.shield(created), CONTROL_TIMEOUT + 5, f"creating a container of {image} to run {what}"
            )
        except BaseException:
            # a create cancelled in flight still makes the container: remove it once made
            await to_the_end(remove_when_made(created, remove, CONTROL_TIMEOUT + 5))
            raise

        def run() -> int:
            api.start(container_id)
            for chunk in self._sdk.streams.api.logs(container_id, stream=True, follow=True):
                log(chunk.decode(errors="replace"))
            return int(self._sdk.streams.api.wait(container_id)["StatusCode"])

        try:
            return await self._sdk.call(run, timeout=timeout, what=f"running {what} in {image}")
        finally:
            # forced removal also ends the log stream a deadline or a cancel left running
            await to_the_end(remove(container_id))

    async def commit(
        self,
        container_id: str,
        repository: str,
        tag: str,
        labels: Mapping[str, str],
        *,
        timeout: float = COMMIT_TIMEOUT,
    ) -> str:
        """A container's file system as a local image `repository:tag`; the image id. Its
        labels are `labels` over the container's own (dockerd merges the two; the run's
        labels on a cache image are a record of the run that made it, and nothing sweeps
        images by them). The engine keeps the container's command, environment and user.
        Through the streams client: a large container's commit takes the engine minutes on
        a busy machine, and only `timeout` ends it; committing again is harmless, so a
        commit whose deadline ran out is retried once."""

        def work() -> str:
            done = self._sdk.streams.api.commit(
                container_id, repository=repository, tag=tag, conf={"Labels": dict(labels)}, pause=True
            )
            return str(done["Id"])

        return await self._once_more(work, timeout, f"the commit of {repository}:{tag}")

    async def _once_more(self, work: Callable[[], T], timeout: float, what: str) -> T:
        """`work` under `timeout`, once more when its deadline runs out (idempotent work
        only); the second deadline's error says it was the second."""
        try:
            return await self._sdk.call(work, timeout=timeout, what=what)
        except DeadlineExceeded:
            pass
        try:
            return await self._sdk.call(work, timeout=timeout, what=what)
        except DeadlineExceeded as exc:
            raise DeadlineExceeded(f"{exc.detail} (tried twice)") from None

    async def image_env(self, image: str) -> list[str]:
        """The `KEY=value` environment in a local image's config."""

        def read() -> list[str]:
            attrs = self._sdk.control.images.get(image).attrs
            return [str(item) for item in (attrs.get("Config") or {}).get("Env") or []]

        return await self._sdk.call(read, what=f"reading the environment of {image}")

    async def read_files(
        self,
        image: str,
        choices: Sequence[Sequence[str]],
        *,
        labels: Mapping[str, str],
        max_bytes: int,
        timeout: float,
    ) -> list[ImageFile | None]:
        """For each group of paths, the first that is a regular file in `image` once
        symlinks are followed inside the image; None when none is. Read from a container
        created but never started (no network, no process) and removed before this returns,
        one file at a time through the archive API (a stat first, then the file streamed,
        never more than `max_bytes` of it: a larger one comes back without its bytes).
        Through the streams client (a file of hundreds of MiB takes longer than a control
        call may): only `timeout` ends it; retried once, since it changes nothing."""
        api: Any = self._sdk.streams.api

        def work() -> list[ImageFile | None]:
            created = api.create_container(
                image=image,
                command=["/nonexistent"],  # never runs: the container is never started
                labels=dict(labels),
                host_config=api.create_host_config(network_mode="none"),
            )
            container_id = str(created["Id"])
            try:
                found: list[ImageFile | None] = []
                for paths in choices:
                    special: ImageFile | None = None  # a loop, a directory, a device: said if nothing better
                    regular: ImageFile | None = None
                    for path in paths:
                        read = _read_file(api, container_id, path, max_bytes)
                        if read is not None and not read.note:
                            regular = read
                            break
                        special = special or read
                    found.append(regular or special)
                return found
            finally:
                api.remove_container(container_id, force=True, v=True)

        return await self._once_more(work, timeout, f"reading programs out of {image}")

    async def tag(self, image: str, repository: str, tag: str) -> None:
        await self._sdk.call(
            lambda: self._sdk.control.api.tag(image, repository, tag, force=True), what=f"tagging {repository}:{tag}"
        )

    async def push(self, repository: str, tag: str, *, timeout: float = 1800) -> None:
        def work() -> None:
            for message in self._sdk.streams.api.push(repository, tag=tag, stream=True, decode=True):
                if "error" in message:
                    raise EngineError(f"push of {repository}:{tag} failed: {str(message['error'])[:300]}")

        # pushing again sends only what the registry lacks: retried once
        await self._once_more(work, timeout, f"the push of {repository}:{tag}")


def _read_file(api: Any, container_id: str, path: str, max_bytes: int) -> ImageFile | None:
    """`path` of a container as a regular file (links followed), or None (docker-py's
    private request helpers: its `get_archive` can neither stat alone nor stop early)."""
    url = api._url("/containers/{0}/archive", container_id)
    where = path
    for _ in range(MAX_LINKS):
        try:
            head = api.head(url, params={"path": where})
            api._raise_for_status(head)
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as exc:
            if exc.status_code == 500 and _LOOP.search(_why_not(api, url, where)):
                return ImageFile(path, where, 0, note="a symlink loop")
            raise
        stat = _path_stat(head.headers.get("X-Docker-Container-Path-Stat", ""))
        mode = int(stat.get("mode") or 0)
        if mode & _MODE_SYMLINK:  # the engine resolves the whole chain inside the container
            target = str(stat.get("linkTarget") or "")
            if not target:
                return None
            where = posixpath.normpath(posixpath.join(posixpath.dirname(where), target))
            continue
        if mode & _MODE_NOT_REGULAR:
            return ImageFile(path, where, 0, note=_kind_of_mode(mode))
        size = int(stat.get("size") or 0)
        if size > max_bytes:
            return ImageFile(path, where, size)
        # uncompressed: dockerd would otherwise gzip the whole program for a local socket
        response = api._get(url, params={"path": where}, stream=True, headers={"Accept-Encoding": "identity"})
        try:
            api._raise_for_status(response)
            response.raw.decode_content = True  # should it compress anyway
            with tarfile.open(fileobj=response.raw, mode="r|") as archive:
                member = archive.next()
                handle = archive.extractfile(member) if member is not None and member.isreg() else None
                if handle is None or member is None or member.size > max_bytes:
                    return None
                return ImageFile(path, where, member.size, _read_into(handle, member.size))
        except (tarfile.TarError, EOFError) as exc:
            raise EngineError(f"reading {where} from the image failed: {exc}") from None
        finally:
            response.close()
    return ImageFile(path, where, 0, note=f"a chain of more than {MAX_LINKS} symlinks")


def _why_not(api: Any, url: str, where: str) -> str:
    """The engine's message for a path it cannot stat (a HEAD answer has no body: a GET's
    has, `too many links` for a loop); never shown, since it names the engine's own paths."""
    response = api._get(url, params={"path": where}, stream=True)
    try:
        return bytes(response.raw.read(4096)).decode("utf-8", "replace") if response.status_code >= 400 else ""
    finally:
        response.close()


def _read_into(handle: Any, size: int) -> bytes:
    """`size` bytes from `handle` into one buffer made once: a program of hundreds of MiB
    is held once, not as chunks and their join."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = handle.readinto(view[done : min(size, done + (1 << 20))])
        if not got:
            raise EngineError(f"the archive ended {size - done} bytes early")
        done += got
    view.release()
    return buffer  # type: ignore[return-value]  # bytearray: bytes' methods, no copy


def _kind_of_mode(mode: int) -> str:
    """What a path that is no regular file is, from Go's os.FileMode bits."""
    if mode & (1 << 31):
        return "a directory"
    if mode & (1 << 26):
        return "a device"
    if mode & (1 << 25):
        return "a named pipe"
    if mode & (1 << 24):
        return "a socket"
    return "not a regular file"


def _path_stat(header: str) -> dict[str, Any]:
    try:
        stat = json.loads(base64.b64decode(header) or b"{}")
    except (binascii.Error, ValueError):
        return {}
    return stat if isinstance(stat, dict) else {}


def _split_tag(reference: str) -> tuple[str, str]:
    name, _, tag = reference.rpartition(":")
    if not name or "/" in tag:
        return reference, "latest"
    return name, tag


def _shutdown(sockets: Iterable[Any]) -> None:
    """Unblock a thread reading a stream: shutdown (not close) wakes a blocked recv."""
    for sock in sockets:
        with contextlib.suppress(OSError, AttributeError):
            sock.shutdown(socket.SHUT_RDWR)
