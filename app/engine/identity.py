"""Which engine answered, as it says itself: its kind and product (Docker Engine, Docker
Desktop, Podman, ...), its own CPU, memory and kernel, and whether that kernel is the one
ecoready runs on.

Only then may what belongs to the engine's kernel be read here: binfmt_misc for a hint of
its emulators, peer credentials and /proc for file drops and listening ports, the qemu
version. A Docker Desktop, Colima or OrbStack socket on a Mac (or on Linux: Docker
Desktop's VM) leads to another kernel; so does anything that is not a unix socket.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ecoready.engine.discovery import EngineAddress
from ecoready.engine.engine_kinds import DOCKER_ENGINE, PODMAN, EngineKind, kind_of_engine


@dataclass(frozen=True)
class EngineIdentity:
    address: EngineAddress
    kind: EngineKind
    product: str  # "Docker Engine 26.1.5", "Podman Engine 4.3.1", "Docker Desktop (engine 27.5.1)"
    same_kernel: bool
    cpus: int = 0
    memory_bytes: int = 0
    kernel: str = ""
    operating_system: str = ""
    engine_id: str = ""  # the engine's own ID (/info), the key of what is cached about it
    root_dir: str = ""  # where it keeps images and containers, on its own machine
    arch: str = ""  # what /version says it runs natively, as said ("x86_64", "arm64", ...)
    version: str = ""  # the engine's version (/version)
    api_version: str = ""

    def said(self) -> str:
        """`Docker Engine 26.1.5 at unix:///var/run/docker.sock (the default socket)`."""
        return f"{self.product} at {self.address.said()}"


def identify(address: EngineAddress, version: Mapping[str, Any], info: Mapping[str, Any]) -> EngineIdentity:
    # what the engine says first; a Podman socket path whose engine does not say Podman is a dockerd
    kind = kind_of_engine(version, info) or (address.kind if address.kind is not PODMAN else DOCKER_ENGINE)
    engine_version = str(version.get("Version", "") or "")
    components = version.get("Components")
    named = [str(c.get("Name")) for c in components if isinstance(c, dict)] if isinstance(components, list) else []
    if kind.key == "podman":
        product = f"Podman Engine {engine_version}".strip()
    elif kind.key in ("docker", "rootless-docker", "remote"):
        first = named[0] if named and named[0] != "Engine" else "Docker Engine"  # dockerd calls itself "Engine"
        product = f"{first} {engine_version}".strip()
    else:
        product = f"{kind.name} (engine {engine_version})" if engine_version else kind.name
    kernel = str(info.get("KernelVersion", "") or "")
    return EngineIdentity(
        address=address,
        kind=kind,
        product=product,
        same_kernel=on_this_kernel(address.url, kernel),
        cpus=_int(info.get("NCPU")),
        memory_bytes=_int(info.get("MemTotal")),
        kernel=kernel,
        operating_system=str(info.get("OperatingSystem", "") or ""),
        engine_id=str(info.get("ID", "") or ""),
        root_dir=str(info.get("DockerRootDir", "") or ""),
        arch=str(version.get("Arch", "") or ""),
        version=engine_version,
        api_version=str(version.get("ApiVersion", "") or ""),
    )


def on_this_kernel(url: str, engine_kernel: str) -> bool:
    """Whether the engine runs on the kernel ecoready runs on: a unix socket, a Linux client,
    and the engine reports this very kernel release (a VM's kernel is another build)."""
    if not sys.platform.startswith("linux") or not url.startswith("unix://"):
        return False
    return bool(engine_kernel) and engine_kernel == platform.release()


def _int(value: object) -> int:
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return 0
