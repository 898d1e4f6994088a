"""The engine as a run uses it: what `ProbeContext`, its helpers and the runner ask of a
Docker host, of its images and of the run's image store, and nothing more.

`RunContext.host` and `RunContext.images` are typed with these protocols. The real classes
(`engine.docker_host.DockerHost`, its `EngineImages`, `registry.image_store.ImageStore`)
need not name them: they match structurally, and so must the test fakes
(tests/support/fake_host.py). mypy checks both where a `RunContext` is built, and
tests/unit/test_seams.py checks that every member is there with the same parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ecoready.domain.images import ImageInfo
    from ecoready.domain.specs import ContainerSpec, ContainerState, ExecResult, ImageFile, SweepResult
    from ecoready.engine.identity import EngineIdentity
    from ecoready.engine.owners import OwnerInfo
    from ecoready.registry.client import RegistryClient


class HostImages(Protocol):
    """The image calls of one engine (`DockerHost.images`): the install cache's and the
    build audit's."""

    async def image_labels(self, reference: str) -> dict[str, str] | None: ...

    async def image_id(self, reference: str) -> str: ...

    async def commit(
        self,
        container_id: str,
        repository: str,
        tag: str,
        labels: Mapping[str, str],
        *,
        timeout: float = 600.0,
    ) -> str: ...

    async def image_env(self, image: str) -> list[str]: ...

    async def read_files(
        self,
        image: str,
        choices: Sequence[Sequence[str]],
        *,
        labels: Mapping[str, str],
        max_bytes: int,
        timeout: float,
    ) -> list[ImageFile | None]: ...


class EngineHost(Protocol):
    """One Docker engine: labelled containers, networks and volumes, exec, logs, files,
    sweeps (`DockerHost`)."""

    @property
    def name(self) -> str: ...

    @property
    def images(self) -> HostImages: ...

    @property
    def identity(self) -> EngineIdentity: ...

    async def ping(self, timeout: float = 5.0) -> bool: ...

    async def create_network(self, name: str, labels: Mapping[str, str], *, internal: bool = True) -> str: ...

    async def create_volume(self, name: str, labels: Mapping[str, str]) -> str: ...

    async def run(self, spec: ContainerSpec) -> str: ...

    async def state(self, container_id: str) -> ContainerState: ...

    async def exec(
        self,
        container_id: str,
        argv: Iterable[str],
        *,
        timeout: float,
        user: str = "",
        env: Mapping[str, str] | None = None,
        workdir: str | None = None,
    ) -> ExecResult: ...

    async def logs(self, container_id: str, tail: int = 40, *, max_line: int = 500) -> list[str]: ...

    async def put_files(self, container_id: str, files: Iterable[Any]) -> None: ...

    async def stop(self, container_id: str, timeout: int = 10) -> None: ...

    async def start(self, container_id: str) -> None: ...

    async def remove_container(self, container_id: str) -> bool: ...

    async def remove_network(self, network_id: str) -> bool: ...

    async def remove_volume(self, name: str) -> bool: ...

    async def labelled(
        self, label_filter: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]: ...

    async def sweep(
        self,
        *,
        run_id: str | None = None,
        dead_owners: bool = False,
        everything: bool = False,
        me: OwnerInfo | None = None,
    ) -> SweepResult: ...


class RunImages(Protocol):
    """The images of a run on one host: resolved, pulled once, verified (`ImageStore`)."""

    @property
    def registry(self) -> RegistryClient: ...

    @property
    def unchecked(self) -> Mapping[str, tuple[int, str]]: ...

    async def ensure(self, reference: str, arch: str, *, for_cell: bool = True) -> ImageInfo: ...
