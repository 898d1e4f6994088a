"""A user's stack as a list of services, whatever it was read from: a compose file
(`compose.py`), Kubernetes manifests (`kube.py`, `operators.py`), the containers running
on an engine, or a list of images. The mapping onto
matrix rows (`mapping.py`) reads only this."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ecoready.domain.specs import RunningContainer

# Labels docker compose puts on the containers it starts.
COMPOSE_SERVICE = "com.docker.compose.service"
COMPOSE_PROJECT = "com.docker.compose.project"
COMPOSE_DEPENDS_ON = "com.docker.compose.depends_on"  # "db:service_started:false,cache:..."


@dataclass(frozen=True)
class Service:
    """One service of the stack. Environment values may hold secrets: they are read to find
    database hosts and names, and never written out as they are (`mapping.py`)."""

    name: str
    image: str  # "" when the compose file only builds it
    platform: str = ""  # the compose file's `platform:` pin
    pinned_by: str = "the compose file"  # who pins it (a running engine: emulation)
    depends_on: tuple[str, ...] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()  # () = the image's own
    entrypoint: tuple[str, ...] = ()
    healthcheck: tuple[str, ...] = ()  # Docker's test form: ("CMD", ...) or ("CMD-SHELL", "...")
    ports: tuple[int, ...] = ()  # TCP ports inside the container (ports:, expose:)
    restart: str = ""  # compose `restart:` (always, unless-stopped, on-failure, no): a daemon's mark
    built: bool = False  # the compose file builds it (`build:`)
    # where it runs says whether it stays up (Kubernetes: a Deployment's container, a sidecar)
    # or runs to completion (an init container, a Job): None = by its ports and `restart:`
    daemon: bool | None = None
    runs_as: str = ""  # where it runs, for the row's comment ("an init container of StatefulSet/mysql")
    # variables whose value comes from a Secret (never read): wired as `<NAME>_FILE` when the
    # image reads it so, else said (as a compose file's password is)
    secret_env: tuple[str, ...] = ()
    role: str = ""  # a `known.py` name when the source says what it is (an operator's part)
    aliases: tuple[str, ...] = ()  # other host names it is reached by (Kubernetes Services)
    pinned_at: tuple[str, ...] = ()  # where its arch pin is written (Kubernetes: YAML paths)
    # what the reader could not take over, one line each (env_file, volumes, ...)
    notes: tuple[str, ...] = ()


def from_images(references: Sequence[str]) -> list[Service]:
    """`--images a,b,c`: one service per image, named after its repository."""
    services = []
    for reference in references:
        path = reference.split("@", 1)[0]
        last = path.rsplit("/", 1)[-1]
        name = last.split(":", 1)[0] or reference
        services.append(Service(name=name, image=reference))
    return services


def from_containers(containers: Sequence[RunningContainer], native_arch: str) -> list[Service]:
    """`--from-host`: one service per running container, named by its compose service when
    compose started it (replicas of one service are one service). A container whose image
    is of another arch than the engine's runs emulated: that is a pin (`platform:
    linux/<arch>`) as much as one in a compose file."""
    services = []
    seen: set[tuple[str, str, str]] = set()
    for container in containers:
        replica = (
            container.labels.get(COMPOSE_PROJECT, ""),
            container.labels.get(COMPOSE_SERVICE, ""),
            container.image,
        )
        if replica[1] and replica in seen:
            continue
        seen.add(replica)
        depends = container.labels.get(COMPOSE_DEPENDS_ON, "")
        services.append(
            Service(
                name=container.labels.get(COMPOSE_SERVICE) or container.name,
                image=container.image,
                platform=f"linux/{container.arch}" if container.arch and container.arch != native_arch else "",
                pinned_by="the engine, which runs it emulated",
                depends_on=tuple(d.split(":", 1)[0] for d in depends.split(",") if d.split(":", 1)[0]),
                environment=dict(container.env),
                command=container.command,
                healthcheck=tuple(container.healthcheck) if container.healthcheck[:1] != ("NONE",) else (),
                ports=container.ports,
            )
        )
    return services
