"""The containers running on an engine, read for `ecoready init --from-host`: what each was
started from (image, environment, labels, command, healthcheck, exposed ports) and its
image's architecture. ecoready's own containers are left out."""

from __future__ import annotations

from typing import Any

import docker.errors

from ecoready.domain.model import normalize_arch
from ecoready.domain.specs import LABEL_RUN, RunningContainer

MAX_LISTED = 500  # containers read at most (one inspect each)


def running_containers(api: Any) -> list[RunningContainer]:
    """Blocking SDK calls on `api` (docker.APIClient): run it on the engine's pool."""
    found: list[RunningContainer] = []
    images: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {}  # image id -> arch, CMD, ENV
    for summary in api.containers()[:MAX_LISTED]:
        if LABEL_RUN in (summary.get("Labels") or {}):
            continue
        try:
            info = api.inspect_container(summary["Id"])
        except docker.errors.NotFound:
            continue  # gone since it was listed
        config = info.get("Config") or {}
        image_id = str(info.get("Image") or "")
        if image_id not in images:
            images[image_id] = _image_facts(api, image_id)
        arch, own_command, own_env = images[image_id]
        command = tuple(str(a) for a in config.get("Cmd") or ())
        found.append(
            RunningContainer(
                name=str(info.get("Name") or summary["Id"][:12]).lstrip("/"),
                image=str(config.get("Image") or image_id),
                arch=arch,
                env=dict(item.partition("=")[::2] for item in config.get("Env") or [] if item not in own_env),
                labels={str(k): str(v) for k, v in (config.get("Labels") or {}).items()},
                command=() if command == own_command else command,  # only what was asked
                healthcheck=tuple(str(a) for a in (config.get("Healthcheck") or {}).get("Test") or ()),
                ports=tuple(
                    sorted(
                        int(key.split("/")[0])
                        for key in config.get("ExposedPorts") or {}
                        if key.endswith("/tcp") and key.split("/")[0].isdigit()
                    )
                ),
            )
        )
    return found


def _image_facts(api: Any, image_id: str) -> tuple[str, tuple[str, ...], frozenset[str]]:
    """An image's architecture, its own command (CMD) and environment (ENV): a container's
    are reported only where they differ, i.e. what it was started with."""
    try:
        info = api.inspect_image(image_id)
    except docker.errors.NotFound:
        return "", (), frozenset()
    config = info.get("Config") or {}
    arch = normalize_arch(str(info.get("Architecture", ""))) or ""
    return arch, tuple(str(a) for a in config.get("Cmd") or ()), frozenset(str(e) for e in config.get("Env") or ())
