"""What ecoready does differently when the engine behind the Docker API is Podman.

Podman serves a Docker-compatible API (`podman system service`), and ecoready talks to it
with the same SDK calls. It tells itself apart in its `/version` answer (a component named
"Podman Engine": `kinds.kind_of_engine`, `DockerHost.podman`). What differs, found on
Debian's podman 4.3:

- Resource limits. Rootful podman gives every container `nofile` and `nproc` limits of
  1048576 (rootless: the user's hard limits), which the OCI runtime sets as the container
  starts. Where the engine may not raise its own limits that high (in a container, a
  sandbox, a service unit with lower limits), every start fails in runc with `error
  setting rlimit type 7 (nofile) / 6 (nproc): operation not permitted`. Docker's
  containers inherit the engine's limits instead, and never meet this. So every
  container ecoready starts on Podman asks for `ULIMITS`: low enough that no host
  refuses them (1024 open files is Linux's default soft limit), high enough for what a
  smoke or quick cell runs (the lab's MariaDB, MySQL and connectors run with them).
- Healthchecks. Podman runs a container's healthcheck from a systemd timer; with no
  systemd (a container, WSL, a minimal host) it logs "unable to get systemd connection to
  add healthchecks" and the health stays `starting` for ever, which would fail a service
  whose check passes. So on Podman `DockerHost.state` starts a due healthcheck itself,
  through libpod's endpoint on the same socket (what `podman healthcheck run` does), at
  most once per the container's interval, in the background: the state is read without
  waiting for the check, and a later read shows its result. Where systemd runs them too,
  this only adds runs.
- File drops (`filedrop.py`) need the peer to be a `dockerd`: on Podman the container
  files go through the archive API (`put_archive`), as for a remote engine.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping
from typing import Any

from docker.types import Ulimit

DEFAULT_HEALTH_INTERVAL = 30.0  # seconds: Docker's and Podman's when the check names none
# (name, soft, hard): below any host's limits (nofile 1024: Linux's default soft limit;
# nproc counts the processes of the container's uid on the whole host)
ULIMITS: tuple[tuple[str, int, int], ...] = (("nofile", 1024, 1024), ("nproc", 4096, 4096))


def ulimits() -> list[Ulimit]:
    """`ULIMITS` as the create call's HostConfig.Ulimits."""
    return [Ulimit(name=name, soft=soft, hard=hard) for name, soft, hard in ULIMITS]


def healthcheck_due(
    container_id: str, attrs: Mapping[str, Any], last_runs: MutableMapping[str, float], now: float | None = None
) -> bool:
    """Whether to run the healthcheck of a container (its inspect `attrs`) now: it has one,
    it runs, and its interval has passed since this process last ran it (due at once the
    first time). A due run is recorded in `last_runs` (`now`: time.monotonic())."""
    check = (attrs.get("Config") or {}).get("Healthcheck") or {}
    test = check.get("Test") or []
    if not test or test[:1] == ["NONE"] or not (attrs.get("State") or {}).get("Running"):
        return False
    interval = float(check.get("Interval") or 0) / 1e9 or DEFAULT_HEALTH_INTERVAL
    now = time.monotonic() if now is None else now
    last = last_runs.get(container_id)
    if last is not None and now - last < interval:
        return False
    last_runs[container_id] = now
    return True


def run_healthcheck(api: Any, container_id: str) -> None:
    """Run a container's healthcheck once, through libpod's endpoint on the same socket;
    the engine counts the result as it counts its own runs (failing streak, retries), and
    the container's inspect shows the health. `api` is docker-py's APIClient, whose private
    request helpers reach that endpoint (types-docker does not declare them)."""
    api._raise_for_status(api._get(api._url("/libpod/containers/{0}/healthcheck", container_id)))
