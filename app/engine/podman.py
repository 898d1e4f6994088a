"""What ecoready does differently when the engine behind the Docker API is Podman.

Podman serves a Docker-compatible API (`podman system service`), and ecoready talks to it
with the same SDK calls. It tells itself apart in its `/version` answer: a component named
"Podman Engine". What differs, found on Debian's podman 4.3:

- Resource limits. Rootful podman gives every container `nofile` and `nproc` limits of
  1048576 (rootless: the user's hard limits), set by the OCI runtime as the container
  starts. Where the engine itself may not raise its limits that high (a container host, a
  sandbox, a hardened service unit), every start fails in runc with `error setting rlimit`.
  Docker's containers inherit the engine's own limits instead and never hit it. So every
  container ecoready starts on Podman asks for `ULIMITS`, the soft defaults a Linux login
  has and every host allows: the servers still start (MySQL and MariaDB lower their table
  caches to fit 1024 files and say so in their logs), and nothing ecoready runs in a
  smoke or quick cell needs more.
- File drops (`filedrop.py`) need the peer to be a `dockerd`: on Podman the container
  files go through the archive API (`put_archive`), as for a remote engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ENGINE_COMPONENT = "Podman Engine"  # the Components[].Name of podman's /version answer

# (name, soft, hard): a Linux login's usual soft limits, which no host refuses
ULIMITS: tuple[tuple[str, int, int], ...] = (("nofile", 1024, 1024), ("nproc", 4096, 4096))


def is_podman(version: Mapping[str, Any]) -> bool:
    """Whether a `/version` answer is Podman's."""
    components = version.get("Components") or []
    return any(isinstance(c, Mapping) and c.get("Name") == ENGINE_COMPONENT for c in components)


def ulimits() -> list[dict[str, Any]]:
    """`ULIMITS` as the create call's HostConfig.Ulimits."""
    return [{"Name": name, "Soft": soft, "Hard": hard} for name, soft, hard in ULIMITS]
