"""The ONLY module that imports docker. Async methods over the docker SDK, each run on a
bounded thread pool under a deadline; labelled resources; exec, logs, pulls, sweeps.

Two SDK clients per host: `_ctl` with a short socket timeout for control calls, and
`_io` without one for long execs and log reads (their deadline is the asyncio one).
Pulls get their own client whose socket timeout is the pull's idle watchdog.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import tarfile
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import docker
import docker.auth
import docker.constants
import docker.errors
import docker.tls
import requests.exceptions
import urllib3.exceptions

from ecoready.domain.errors import DeadlineExceeded, DockerUnavailable, EngineError, EnvironmentProblem, PullStalled
from ecoready.domain.model import HostFacts, TlsFiles, normalize_arch
from ecoready.domain.specs import (
    LABEL_OWNER,
    LABEL_OWNER_START,
    LABEL_RUN,
    ContainerSpec,
    ContainerState,
    ExecResult,
    SweepResult,
)
from ecoready.domain.text import inert
from ecoready.engine import filedrop
from ecoready.engine.aio import to_the_end
from ecoready.engine.proc import process_start
from ecoready.engine.threads import DaemonThreadPool

T = TypeVar("T")

CONNECT_TIMEOUT = 8.0
CONTROL_TIMEOUT = 30.0
# A pull with no progress message for this long has stalled (env: seconds).
PULL_IDLE_TIMEOUT = float(os.environ.get("ECOREADY_PULL_IDLE_TIMEOUT", "120"))
REMOVAL_WAIT = 30.0  # how long to wait for a removal someone else started
# Capabilities no database image needs; dropped from every container we start.
DROP_CAPS = ("NET_RAW", "MKNOD", "SYS_CHROOT", "AUDIT_WRITE", "SETFCAP", "SETPCAP")


# ssh:// hosts: sshd allows 10 sessions per connection by default (MaxSessions), and every
# call in flight holds one; fewer worker threads keep each SDK client under that.
SSH_WORKERS = 8


def _unavailable(exc: BaseException) -> bool:
    if isinstance(exc, (requests.exceptions.ConnectionError, ConnectionError, FileNotFoundError, EOFError)):
        return True
    if type(exc).__module__.split(".")[0] == "paramiko":  # ssh:// transport: channel or session refused
        return True
    if isinstance(exc, urllib3.exceptions.ProtocolError):  # a stream cut off: the engine went away
        return True
    text = str(exc)
    return (
        "Connection aborted" in text or "Connection broken" in text or "Error while fetching server API version" in text
    )


def local_kernel(url: str) -> bool:
    """Whether an engine address is on this machine's kernel (binfmt emulators read here apply)."""
    where = url or os.environ.get("DOCKER_HOST", "")
    return not where or where.startswith("unix://")


@dataclass(frozen=True)
class OwnerInfo:
    hostname: str
    pid: int
    start: str


def this_owner() -> OwnerInfo:
    pid = os.getpid()
    return OwnerInfo(socket.gethostname(), pid, process_start(pid))


def owner_alive(owner: str, start: str, me: OwnerInfo) -> bool:
    """Whether the process that owns a resource still runs. Owners on other machines are
    assumed alive: we cannot tell, and must never remove a live run's resources."""
    host, _, pid_text = owner.rpartition(":")
    if host != me.hostname:
        return True
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == me.pid:
        return start in ("", me.start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not start or process_start(pid) == start


class DockerHost:
    """One Docker engine. Create with `await DockerHost.connect(...)`."""

    def __init__(
        self,
        name: str,
        url: str,
        ctl: Any,
        io_client: Any,
        pool: DaemonThreadPool,
        tls: TlsFiles | None = None,
        drop: filedrop.FileDrop | None = None,
    ) -> None:
        self.name = name
        self.url = url
        self.tls = tls
        self._ctl = ctl
        self._io = io_client
        self._pool = pool
        # pings get threads of their own: whether the engine answers must not wait behind
        # calls stuck in it (that is when the answer matters)
        self._ping_pool = DaemonThreadPool(2, f"docker-{name}-ping")
        self._ping_client: Any = None
        self.native_arch = ""
        # where container files are written for a bind mount; None: the archive API
        self.drop = drop
        self._dropped: dict[str, tuple[str, str]] = {}  # container id -> (name, files_dir)

    @property
    def local_kernel(self) -> bool:
        return local_kernel(self.url)

    # -- lifecycle -------------------------------------------------------------------
    @classmethod
    async def connect(
        cls,
        name: str = "local",
        url: str = "",
        *,
        tls: TlsFiles | None = None,
        max_workers: int = 16,
        timeout: float = CONNECT_TIMEOUT,
    ) -> DockerHost:
        """Connect or raise EnvironmentProblem within `timeout` seconds, on every transport:
        docker-py's ssh transport (paramiko) has no connect timeout of its own, so the
        attempt runs on a daemon thread under asyncio's deadline and is abandoned after it."""
        if url.startswith("ssh://"):
            max_workers = min(max_workers, SSH_WORKERS)
        pool = DaemonThreadPool(max_workers, f"docker-{name}")

        def make() -> tuple[Any, Any, filedrop.FileDrop | None]:
            ctl = _client(url, CONTROL_TIMEOUT, tls)
            ctl.ping()
            drop = filedrop.FileDrop.for_engine(_socket_path(url)) if local_kernel(url) else None
            return ctl, _client(url, None, tls), drop

        loop = asyncio.get_running_loop()
        where = url or os.environ.get("DOCKER_HOST") or "the default socket (unix:///var/run/docker.sock)"
        try:
            _check_tls_files(tls)
            ctl, io_client, drop = await asyncio.wait_for(loop.run_in_executor(pool, make), timeout)
        except asyncio.TimeoutError:
            pool.shutdown(wait=False)
            raise EnvironmentProblem(f"docker engine at {where} did not answer within {timeout:.0f} s") from None
        except EnvironmentProblem:
            pool.shutdown(wait=False)
            raise
        except Exception as exc:
            pool.shutdown(wait=False)
            reason = _connect_reason(exc)
            fix = "start it, e.g. `make setup` or `dockerd &`" if local_kernel(url) else "see docs/hosts.md"
            raise EnvironmentProblem(f"docker engine at {where} is unreachable: {reason[:200]} ({fix})") from None
        return cls(name, url, ctl, io_client, pool, tls, drop)

    async def close(self, timeout: float = 5.0) -> None:
        """Close the SDK clients (best effort, bounded: closing an ssh:// connection to a
        host that vanished can block) and let the worker threads go."""

        def close_all() -> None:
            for client in (self._ctl, self._io, self._ping_client):
                if client is None:
                    continue
                try:
                    client.close()
                except Exception:  # noqa: S110 - closing is best effort
                    pass

        try:
            await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(self._pool, close_all), timeout)
        except (asyncio.TimeoutError, RuntimeError):
            pass
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._ping_pool.shutdown(wait=False, cancel_futures=True)
        if self.drop is not None:
            for name, _ in self._dropped.values():
                self.drop.remove(name)
            self.drop.tidy()

    async def _run(self, fn: Callable[[], T], timeout: float | None = CONTROL_TIMEOUT + 5) -> T:
        return await self._run_future(asyncio.get_running_loop().run_in_executor(self._pool, fn), timeout)

    async def _run_future(self, future: asyncio.Future[T], timeout: float | None) -> T:
        try:
            if timeout is None:
                return await future
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(f"docker call did not return within {timeout:.0f} s") from None
        except docker.errors.APIError as exc:
            if _unavailable(exc):
                raise DockerUnavailable("docker daemon unavailable") from None
            raise EngineError(_explain(exc)) from None
        except (
            requests.exceptions.RequestException,
            urllib3.exceptions.HTTPError,
            docker.errors.DockerException,
            OSError,
        ) as exc:
            if _unavailable(exc):
                raise DockerUnavailable("docker daemon unavailable") from None
            raise EngineError(f"{type(exc).__name__}: {str(exc)[:300]}") from None

    async def facts(self, emulated: Mapping[str, str]) -> HostFacts:
        """The engine's view: native arch, version; `emulated` comes from platform (local)."""

        def read() -> tuple[dict[str, Any], dict[str, Any]]:
            return self._ctl.version(), self._ctl.info()

        version, info = await self._run(read)
        native = normalize_arch(version.get("Arch", "")) or version.get("Arch", "")
        self.native_arch = native
        return HostFacts(
            name=self.name,
            native_arch=native,
            emulated_arches=tuple(a for a in emulated if a != native),
            emulators={a: d for a, d in emulated.items() if a != native},
            docker_version=str(version.get("Version", "")),
            api_version=str(version.get("ApiVersion", "")),
            cpus=int(info.get("NCPU", 0) or 0),
            memory_bytes=int(info.get("MemTotal", 0) or 0),
            kernel=str(info.get("KernelVersion", "")),
        )

    async def ping(self, timeout: float = 5.0) -> bool:
        """Whether the engine answers a new connection now. Not over a kept-alive one: a
        dockerd shutting down has closed its socket but still answers on open connections
        while it stops its containers (seconds), and it is gone for everything else."""

        def fresh_ping() -> bool:
            if self._ping_client is None:
                self._ping_client = _client(self.url, CONTROL_TIMEOUT, self.tls)
            else:
                self._ping_client.api.close()  # drop pooled connections: the next one is new
            return bool(self._ping_client.ping())

        if self.url.startswith("ssh://"):  # a new ssh connection: handshake and authentication too
            timeout = max(timeout, CONNECT_TIMEOUT)
        try:
            future: asyncio.Future[bool] = asyncio.get_running_loop().run_in_executor(self._ping_pool, fresh_ping)
            answered: bool = await self._run_future(future, timeout)
        except Exception:
            return False
        return answered

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
        api = self._io.api
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
            return str(self._ctl.images.get(reference).id)

        future = asyncio.get_running_loop().run_in_executor(self._pool, work)
        try:
            while True:
                done, _ = await asyncio.wait({future}, timeout=min(1.0, idle_timeout / 4))
                if done:
                    return await self._run_future(future, None)
                if time.monotonic() - last[0] > idle_timeout:
                    _shutdown(sockets)
                    raise PullStalled(f"pull stalled: no progress for {idle_timeout:.0f} s")
        except asyncio.CancelledError:
            _shutdown(sockets)
            raise

    async def image_platform(self, image: str) -> tuple[str, str]:
        """(os, arch) recorded in a local image."""

        def read() -> tuple[str, str]:
            attrs = self._ctl.images.get(image).attrs
            return str(attrs.get("Os", "")), normalize_arch(str(attrs.get("Architecture", ""))) or ""

        return await self._run(read)

    async def has_image(self, image: str) -> bool:
        def read() -> bool:
            try:
                self._ctl.images.get(image)
                return True
            except docker.errors.ImageNotFound:
                return False

        return await self._run(read)

    async def image_labels(self, reference: str) -> dict[str, str] | None:
        """Labels of a local image, or None when the host does not have it."""

        def read() -> dict[str, str] | None:
            try:
                attrs = self._ctl.images.get(reference).attrs
            except docker.errors.ImageNotFound:
                return None
            return dict((attrs.get("Config") or {}).get("Labels") or {})

        return await self._run(read)

    async def image_id(self, reference: str) -> str:
        return await self._run(lambda: str(self._ctl.images.get(reference).id))

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
        """`docker build` (classic builder) for a platform; the image id. Output goes to `log`."""

        def work() -> str:
            image_id = ""
            for message in self._io.api.build(
                path=context,
                tag=tag,
                platform=platform,
                buildargs=dict(buildargs),
                labels=dict(labels),
                rm=True,
                forcerm=True,
                decode=True,
                pull=False,
            ):
                if "stream" in message:
                    log(str(message["stream"]))
                if "error" in message:
                    raise EngineError(f"build of {tag} failed: {str(message['error']).strip()[:300]}")
                aux = message.get("aux") or {}
                if "ID" in aux:
                    image_id = str(aux["ID"])
            return image_id or str(self._ctl.images.get(tag).id)

        return await self._run(work, timeout=timeout)

    async def copy_from_image(self, image: str, path: str, *, labels: Mapping[str, str], timeout: float = 300) -> bytes:
        """A tar archive of `path` inside `image`, read from a container that is created but
        never started (no network, no process), and removed before this returns."""

        def work() -> bytes:
            created = self._ctl.api.create_container(
                image=image,
                command=["/nonexistent"],  # never runs: the container is never started
                labels=dict(labels),
                host_config=self._ctl.api.create_host_config(network_mode="none"),
            )
            container_id = str(created["Id"])
            try:
                stream, _stat = self._io.api.get_archive(container_id, path)
                return b"".join(stream)
            finally:
                self._ctl.api.remove_container(container_id, force=True, v=True)

        return await self._run(work, timeout=timeout)

    async def tag(self, image: str, repository: str, tag: str) -> None:
        await self._run(lambda: self._ctl.api.tag(image, repository, tag, force=True))

    async def push(self, repository: str, tag: str, *, timeout: float = 1800) -> None:
        def work() -> None:
            for message in self._io.api.push(repository, tag=tag, stream=True, decode=True):
                if "error" in message:
                    raise EngineError(f"push of {repository}:{tag} failed: {str(message['error'])[:300]}")

        await self._run(work, timeout=timeout)

    async def remove_image(self, reference: str) -> None:
        def work() -> None:
            try:
                self._ctl.api.remove_image(reference, force=True)
            except docker.errors.ImageNotFound:
                pass

        await self._run(work, timeout=120)

    # -- networks, volumes, containers ----------------------------------------------
    async def create_network(self, name: str, labels: Mapping[str, str], *, internal: bool = True) -> str:
        def work() -> str:
            net = self._ctl.networks.create(
                name, driver="bridge", internal=internal, labels=dict(labels), check_duplicate=True
            )
            return str(net.id)

        return await self._create(work, self.remove_network)

    async def _create(self, make: Callable[[], str], remove: Callable[[str], Awaitable[bool]]) -> str:
        """Run a create call; if the caller is cancelled while it is in flight (once or
        more), wait for the id it returns and remove that resource, so nothing is created
        that nobody knows of: the call ends in the engine even when its caller is gone."""
        future = asyncio.get_running_loop().run_in_executor(self._pool, make)
        try:
            return await self._run_future(future, CONTROL_TIMEOUT + 5)
        except asyncio.CancelledError:
            await to_the_end(_remove_when_done(future, remove))
            raise

    async def _remove_after(self, future: asyncio.Future[Any], container_id: str) -> None:
        """Remove a container once the call in flight on it (its start) has returned."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(future), CONTROL_TIMEOUT + 5)
        with contextlib.suppress(Exception):
            await self.remove_container(container_id)

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> str:
        def work() -> str:
            return str(self._ctl.volumes.create(name=name, labels=dict(labels)).name)

        return await self._create(work, self.remove_volume)

    async def run(self, spec: ContainerSpec) -> str:
        """Create (labelled), put its files, start; return the container id.

        A container that fails to start is removed here, so nothing is orphaned between
        create and start.
        """

        binds = {name: {"bind": path, "mode": "rw"} for name, path in spec.volumes.items()}
        archived = spec.files
        drop, files_dir = self.drop, spec.files_dir
        if drop is not None and files_dir is not None:
            dropped = tuple(f for f in spec.files if filedrop.below(f.path, files_dir))
            archived = tuple(f for f in spec.files if f not in dropped)
            binds[str(drop.create(spec.name, files_dir, dropped))] = {"bind": files_dir, "mode": "ro"}

        def create() -> str:
            host_config = self._ctl.api.create_host_config(
                network_mode=spec.network or "none",
                security_opt=["no-new-privileges"],
                cap_drop=list(DROP_CAPS),
                privileged=False,
                pids_limit=spec.pids_limit,
                mem_limit=spec.mem_limit,
                cpuset_cpus=spec.cpuset_cpus,
                tmpfs=dict(spec.tmpfs) or None,
                binds=binds or None,
                port_bindings={p: ("127.0.0.1", h or None) for p, h in spec.publish.items()} if spec.publish else None,
                init=False,
            )
            networking = None
            if spec.network:
                networking = self._ctl.api.create_networking_config(
                    {spec.network: self._ctl.api.create_endpoint_config(aliases=list(spec.aliases) or None)}
                )
            created = self._ctl.api.create_container(
                image=spec.image,
                name=spec.name,
                labels=dict(spec.labels),
                environment=dict(spec.env),
                command=list(spec.command) if spec.command is not None else None,
                entrypoint=list(spec.entrypoint) if spec.entrypoint is not None else None,
                user=spec.user or "",
                host_config=host_config,
                networking_config=networking,
                ports=list(spec.publish) if spec.publish else None,
            )
            return str(created["Id"])

        try:
            container_id = await self._create(create, self.remove_container)
        except BaseException:
            if drop is not None and files_dir is not None:
                drop.remove(spec.name)
            raise
        if drop is not None and files_dir is not None:
            self._dropped[container_id] = (spec.name, files_dir)
        archive = _tar(archived) if archived else None

        def start() -> None:
            if archive is not None:
                self._ctl.api.put_archive(container_id, "/", archive)
            self._ctl.api.start(container_id)

        started = asyncio.get_running_loop().run_in_executor(self._pool, start)
        try:
            await self._run_future(started, CONTROL_TIMEOUT + 5)
        except BaseException:
            # removed after the start returns (a removal racing it may leave it running)
            await to_the_end(self._remove_after(started, container_id))
            raise
        return container_id

    async def state(self, container_id: str) -> ContainerState:
        local = self.local_kernel

        def read() -> ContainerState:
            st = self._ctl.api.inspect_container(container_id)["State"]
            return ContainerState(
                running=bool(st.get("Running")),
                paused=bool(st.get("Paused")),
                exit_code=None if st.get("Running") else st.get("ExitCode"),
                oom_killed=bool(st.get("OOMKilled")),
                error=str(st.get("Error") or ""),
                status=str(st.get("Status") or ""),
                pid=int(st.get("Pid") or 0) if local else 0,
            )

        return await self._run(read)

    async def exec(
        self,
        container_id: str,
        argv: Iterable[str],
        *,
        timeout: float,
        user: str = "",
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
    ) -> ExecResult:
        """Run a command in a container; DeadlineExceeded after `timeout` seconds.

        docker-py's exec has no timeout: the deadline is asyncio's, and a command still
        running then is left to die with its container (the cell's cleanup removes it).
        """
        command = list(argv)

        def work() -> ExecResult:
            started = time.monotonic()
            exec_id = self._io.api.exec_create(
                container_id, command, user=user, environment=dict(env or {}), workdir=workdir, stdout=True, stderr=True
            )["Id"]
            out, err = self._io.api.exec_start(exec_id, demux=True)
            code = self._io.api.exec_inspect(exec_id).get("ExitCode")
            return ExecResult(
                exit_code=-1 if code is None else int(code),
                stdout=(out or b"").decode("utf-8", "replace"),
                stderr=(err or b"").decode("utf-8", "replace"),
                seconds=time.monotonic() - started,
            )

        try:
            return await self._run(work, timeout=timeout)
        except DeadlineExceeded:
            raise DeadlineExceeded(f"`{command[0]}` did not finish within {timeout:.0f} s") from None

    async def logs(self, container_id: str, tail: int = 40, *, max_line: int = 500) -> list[str]:
        def read() -> list[str]:
            raw = self._io.api.logs(container_id, stdout=True, stderr=True, tail=tail)
            return inert(raw.decode("utf-8", "replace"), max_line).splitlines()[-tail:]

        try:
            return await self._run(read, timeout=5)
        except Exception:
            return []

    async def put_files(self, container_id: str, files: Iterable[Any]) -> None:
        files = tuple(files)
        name, files_dir = self._dropped.get(container_id, ("", ""))
        if self.drop is not None and name and all(filedrop.below(f.path, files_dir) for f in files):
            self.drop.write(name, files_dir, files)  # the mount shows them: no engine call
            return
        archive = _tar(files)
        await self._run(lambda: self._ctl.api.put_archive(container_id, "/", archive))

    async def pause(self, container_id: str) -> None:
        await self._run(lambda: self._ctl.api.pause(container_id))

    async def stop(self, container_id: str, timeout: int = 10) -> None:
        await self._run(lambda: self._ctl.api.stop(container_id, timeout=timeout), timeout=timeout + 20)

    async def start(self, container_id: str) -> None:
        await self._run(lambda: self._ctl.api.start(container_id))

    # -- removal and sweeps ---------------------------------------------------------
    async def remove_container(self, container_id: str) -> bool:
        """Force-remove with its anonymous volumes; True when it existed. Returns only once
        the container is gone, also when another caller's removal was already under way:
        its network endpoint goes with it, so the network can be removed next."""

        def work() -> bool:
            try:
                self._ctl.api.remove_container(container_id, force=True, v=True)
                return True
            except docker.errors.NotFound:
                return False
            except docker.errors.APIError as exc:
                if "already in progress" not in str(exc):
                    raise
            deadline = time.monotonic() + REMOVAL_WAIT
            while time.monotonic() < deadline:
                try:
                    self._ctl.api.inspect_container(container_id)
                except docker.errors.NotFound:
                    break
                time.sleep(0.1)
            return True

        existed = await self._run(work, timeout=CONTROL_TIMEOUT + 20)
        name, _ = self._dropped.pop(container_id, ("", ""))
        if self.drop is not None and name:
            self.drop.remove(name)
        return existed

    async def remove_network(self, network_id: str) -> bool:
        """Remove a network; a moment after its last container went, the engine may still
        count an endpoint ("has active endpoints"), so that refusal is retried briefly."""

        def work() -> bool:
            for attempt in range(20):
                try:
                    self._ctl.api.remove_network(network_id)
                    return True
                except docker.errors.NotFound:
                    return False
                except docker.errors.APIError as exc:
                    if "active endpoints" not in str(exc) or attempt == 19:
                        raise
                    time.sleep(0.25)
            return False

        return await self._run(work, timeout=60)

    async def remove_volume(self, name: str) -> bool:
        def work() -> bool:
            try:
                self._ctl.api.remove_volume(name, force=True)
                return True
            except docker.errors.NotFound:
                return False

        return await self._run(work, timeout=60)

    async def labelled(
        self, label_filter: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """(containers, networks, volumes) carrying a label filter like `ecoready.run=X`."""

        def read() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
            filters = {"label": label_filter}
            containers = self._ctl.api.containers(all=True, filters=filters)
            networks = self._ctl.api.networks(filters=filters)
            volumes = self._ctl.api.volumes(filters=filters).get("Volumes") or []
            return containers, networks, volumes

        return await self._run(read)

    async def sweep(
        self,
        *,
        run_id: str | None = None,
        dead_owners: bool = False,
        everything: bool = False,
        me: OwnerInfo | None = None,
    ) -> SweepResult:
        """Remove ecoready's resources: those of `run_id`, those whose owner process is gone
        (`dead_owners`), or all of them (`everything`). Containers first, then networks
        and volumes (they cannot go while a container uses them)."""
        me = me or this_owner()
        containers, networks, volumes = await self.labelled(LABEL_RUN)

        def doomed(labels: Mapping[str, str] | None) -> bool:
            labels = labels or {}
            if everything:
                return True
            if run_id is not None and labels.get(LABEL_RUN) == run_id:
                return True
            if dead_owners:
                return not owner_alive(labels.get(LABEL_OWNER, ""), labels.get(LABEL_OWNER_START, ""), me)
            return False

        # Each removal on its own: one that fails (e.g. a network a foreign container still
        # uses) must not stop the others; what failed stays listed for the next sweep.
        removed_c = [c["Id"] for c in containers if doomed(c.get("Labels"))]
        done = await asyncio.gather(*(self.remove_container(cid) for cid in removed_c), return_exceptions=True)
        removed_c = [cid for cid, ok in zip(removed_c, done, strict=True) if ok is True]
        removed_n = []
        for nid in (n["Id"] for n in networks if doomed(n.get("Labels"))):
            with contextlib.suppress(EngineError, DeadlineExceeded):
                if await self.remove_network(nid):
                    removed_n.append(nid)
        removed_v = []
        for name in (v["Name"] for v in volumes if doomed(v.get("Labels"))):
            with contextlib.suppress(EngineError, DeadlineExceeded):
                if await self.remove_volume(name):
                    removed_v.append(name)
        if self.drop is not None and (dead_owners or everything):
            self.drop.sweep(everything=everything)  # files of processes gone
        names = {c["Id"]: (c.get("Names") or [c["Id"][:12]])[0].lstrip("/") for c in containers}
        net_names = {n["Id"]: n.get("Name", n["Id"][:12]) for n in networks}
        return SweepResult(tuple(names[c] for c in removed_c), tuple(net_names[n] for n in removed_n), tuple(removed_v))


async def _remove_when_done(future: asyncio.Future[str], remove: Callable[[str], Awaitable[bool]]) -> None:
    with contextlib.suppress(Exception):  # the run's final sweep by label remains
        created = await asyncio.wait_for(asyncio.shield(future), CONTROL_TIMEOUT + 5)
        await remove(created)


def _socket_path(url: str) -> str:
    where = url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    return where.removeprefix("unix://")


def _client(url: str, timeout: float | None, tls: TlsFiles | None = None) -> Any:
    kwargs: dict[str, Any] = {"version": "auto"}
    if timeout is not None:
        kwargs["timeout"] = timeout
    else:
        kwargs["timeout"] = 24 * 3600  # no socket timeout for long streams: asyncio bounds them
    if not url:
        return docker.from_env(**kwargs)
    if url.startswith("ssh://"):
        # paramiko rather than the ssh binary: one connection per client, host keys checked
        # against ~/.ssh/known_hosts (unknown keys refused), ~/.ssh/config honoured
        return docker.DockerClient(base_url=url, use_ssh_client=False, max_pool_size=SSH_WORKERS, **kwargs)
    if tls is not None:
        config = docker.tls.TLSConfig(client_cert=(tls.cert, tls.key), ca_cert=tls.ca, verify=True)
        # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE replace the host's own CA when a
        # request does not name one (psf/requests#3829), and version="auto" asks the engine
        # inside the constructor: start from a fixed version, stop trusting the environment,
        # then negotiate as "auto" would
        fixed = {**kwargs, "version": docker.constants.DEFAULT_DOCKER_API_VERSION}
        client = docker.DockerClient(base_url=url, tls=config, **fixed)
        client.api.trust_env = False
        setattr(client.api, "_version", str(client.api.version(api_version=False)["ApiVersion"]))  # noqa: B010
        return client
    return docker.DockerClient(base_url=url, **kwargs)


# What matters in the SDK's nested connection errors ("Error while fetching server API
# version: HTTPSConnectionPool(...): Max retries exceeded ... (Caused by SSLError(...")
_REASONS = (
    "[SSL",
    "Connection refused",
    "No such file or directory",
    "Permission denied",
    "Name or service not known",
    "timed out",
    "not found in known_hosts",
    "Authentication failed",
    "Unable to connect",
)


def _connect_reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    for marker in _REASONS:
        at = text.find(marker)
        if at >= 0:
            return text[at : at + 160].rstrip("')\" ")
    return text[:200]


def _check_tls_files(tls: TlsFiles | None) -> None:
    if tls is None:
        return
    for what, path in (("CA certificate", tls.ca), ("client certificate", tls.cert), ("client key", tls.key)):
        if not os.path.isfile(path):
            raise EnvironmentProblem(f"TLS {what} {path} does not exist (see [[hosts]] tls_* in docs/matrix.md)")


def _explain(exc: docker.errors.APIError) -> str:
    text = str(getattr(exc, "explanation", "") or exc)
    return text.splitlines()[0][:300] if text else type(exc).__name__


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


def _is_timeout(exc: BaseException) -> bool:
    text = str(exc)
    return "timed out" in text or "Read timed out" in text


def _tar(files: Iterable[Any]) -> bytes:
    """A tar of files only: the engine creates missing parent directories (0755, root), and
    leaving existing directories out keeps their owners and modes untouched."""
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for f in files:
            info = tarfile.TarInfo(f.path.strip("/"))
            info.size = len(f.content)
            info.mode = f.mode
            info.mtime = now
            tar.addfile(info, io.BytesIO(f.content))
    return buffer.getvalue()
