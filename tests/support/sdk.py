"""An `Sdk` without an engine: its bounded pool, deadlines and error translation, with real
docker clients that point at a socket that does not exist (the API version given, so making
them asks nothing). For tests of what `Sdk` does around a call, never of the call itself."""

from __future__ import annotations

import docker

from ecoready.engine.sdk import Sdk
from ecoready.engine.threads import DaemonThreadPool

NOWHERE = "unix:///nonexistent/docker.sock"


def unconnected_sdk(name: str, url: str, workers: int, thread_name: str) -> Sdk:
    client = docker.DockerClient(base_url=NOWHERE, version="1.41")
    return Sdk(name, url, client, client, DaemonThreadPool(workers, thread_name))
