"""One Kubernetes pod spec -> the stack's services (pure): every container and init
container, each for what it is.

Where a container runs says whether it stays up or runs to completion, never its ports:
the containers of a Deployment, StatefulSet, DaemonSet or of a Pod that Kubernetes
restarts stay up (exporters, sidecars, an operator's own Deployment: daemons); an init
container, a Job's or CronJob's container and a Pod's with `restartPolicy: Never` or
`OnFailure` run to completion; an init container with `restartPolicy: Always` is a
sidecar (Kubernetes 1.28) and stays up. An init container that runs an image of the pod's
own containers (the server's image with a script) is not a second thing to check: it is
said, with the row that checks its image. A pod with one MySQL server: its other containers
(an XtraBackup sidecar, an exporter) work with that server. Secrets are never read: a
variable set from one is named (`Service.secret_env`) so the mapping wires it as compose's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ecoready.matrix.kinds import KINDS
from ecoready.stack.known import GENERIC_ROLE, known
from ecoready.stack.kube_pins import ArchPins, at, read_pins
from ecoready.stack.services import Service

MAX_ITEMS = 256  # env entries, ports, words: each list read so far
MAX_CONTAINERS = 1024  # containers of one pod read; the rest are said, a line each kind
_EXPANSION = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")
JOB_KINDS = frozenset({"Job", "CronJob"})


@dataclass
class Seen:
    """What the first pass keeps: Services (name, namespace, selector) and ConfigMaps."""

    services: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    config_maps: dict[str, dict[str, str]] = field(default_factory=dict)
    quiet: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # the lines of the kinds not read


@dataclass(frozen=True)
class Pod:
    """Where a pod spec sits: its workload's kind and name, the YAML path, the labels."""

    kind: str
    name: str
    prefix: str  # `spec.template.spec`
    where: str  # `file.yaml StatefulSet/mysql`
    labels: Mapping[str, str]
    namespace: str


def labels_of(node: object) -> dict[str, str]:
    if not isinstance(node, dict):
        return {}
    return {k: v for k, v in list(node.items())[:MAX_ITEMS] if isinstance(k, str) and isinstance(v, str)}


def _daemon(pod: Mapping[str, Any], kind: str, init: bool, container: Mapping[str, Any]) -> bool:
    """Whether Kubernetes keeps this container running (see the module's words)."""
    if init:
        return container.get("restartPolicy") == "Always"
    if kind in JOB_KINDS:
        return False
    return kind != "Pod" or pod.get("restartPolicy", "Always") == "Always"


def read_pod(pod: Mapping[str, Any], place: Pod, seen: Seen) -> list[Service]:
    """The services of one pod spec: its containers (the first reached by the Services
    selecting its labels; a lone one named after the workload), then its init containers."""
    pins = read_pins(pod, place.prefix)
    aliases = _aliases(place.labels, place.namespace, seen)
    lists = {key: _containers(pod, key, place, seen) for key in ("containers", "initContainers")}
    main: list[Service] = []
    for i, raw in enumerate(lists["containers"]):
        name = place.name if len(lists["containers"]) == 1 else ""  # one container: the workload's name
        service = _container(raw, f"{place.prefix}.containers[{i}]", name, place, seen)
        if service is not None:
            daemon = _daemon(pod, place.kind, False, raw)
            main.append(_with(service, pins, place, aliases if i == 0 else (), daemon, "a container"))
    images = {s.image: s.name for s in main if s.image}
    inits: list[Service] = []
    for i, raw in enumerate(lists["initContainers"]):
        path = f"{place.prefix}.initContainers[{i}]"
        service = _container(raw, path, "", place, seen)
        if service is None:
            continue
        daemon = _daemon(pod, place.kind, True, raw)
        if not daemon and service["image"] in images:
            seen.notes.append(
                f"{place.where}: init container `{path}` ({raw.get('name')!s}) runs {service['image']}, the image "
                f"of {images[service['image']]}, before the pod starts: checked by that row, not a second one"
            )
            continue
        what = "a sidecar (an init container Kubernetes keeps running)" if daemon else "an init container"
        inits.append(_with(service, pins, place, (), daemon, what))
    return _wired([*main, *inits])


def _containers(pod: Mapping[str, Any], key: str, place: Pod, seen: Seen) -> list[dict[str, Any]]:
    items = pod.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        seen.notes.append(f"{place.where}: `{place.prefix}.{key}` is not a list: not read")
        return []
    if len(items) > MAX_CONTAINERS:
        dropped = ", ".join(
            str(c.get("image")) for c in items[MAX_CONTAINERS : MAX_CONTAINERS + 5] if isinstance(c, dict)
        )
        seen.notes.append(
            f"{place.where}: `{place.prefix}.{key}` holds {len(items)} containers: the first {MAX_CONTAINERS} "
            f"read, {len(items) - MAX_CONTAINERS} left out ({dropped}, ...)"
        )
    found = []
    for i, item in enumerate(items[:MAX_CONTAINERS]):
        if isinstance(item, dict):
            found.append(item)
        else:
            seen.notes.append(f"{place.where}: `{place.prefix}.{key}[{i}]` is not a container: not read")
    return found


def _wired(services: list[Service]) -> list[Service]:
    """A pod with one MySQL server: what else runs in it works with that server; an init
    container is never a server (it runs a script and exits), it is checked as a command."""
    out = []
    for service in services:
        kind = known(service.image)
        if service.daemon is False and kind is not None and KINDS[kind.probe].serves_sql:
            service = replace(service, role=GENERIC_ROLE)
        out.append(service)
    servers = [s.name for s in out if not s.role and (k := known(s.image)) is not None and KINDS[k.probe].serves_sql]
    if len(servers) != 1:
        return out
    return [s if s.name == servers[0] or s.depends_on else replace(s, depends_on=(servers[0],)) for s in out]


def _with(
    fields: dict[str, Any], pins: ArchPins, place: Pod, aliases: tuple[str, ...], daemon: bool, what: str
) -> Service:
    notes = (*fields.pop("notes"), *(f"{place.where}: {n}" for n in pins.notes))
    return Service(
        **fields,
        platform=pins.platform,
        pinned_by=f"{' and '.join(pins.by)} ({place.where})",
        pinned_at=tuple(f"{place.where}: {p}" for p in pins.places) if pins.platform else (),
        aliases=aliases,
        notes=notes,
        daemon=daemon,
        runs_as=f"{what} of {place.kind}/{place.name}",
    )


def _aliases(labels: Mapping[str, str], namespace: str, seen: Seen) -> tuple[str, ...]:
    """The host names of the Services that select these pod labels (with the cluster's
    longer forms when the namespace is known)."""
    names: list[str] = []
    for name, ns, selector in seen.services:
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            names.append(name)
            ns = ns or namespace
            if ns:
                names.extend((f"{name}.{ns}", f"{name}.{ns}.svc", f"{name}.{ns}.svc.cluster.local"))
    return tuple(dict.fromkeys(names))


def _container(raw: Mapping[str, Any], path: str, name: str, place: Pod, seen: Seen) -> dict[str, Any] | None:
    cname = raw.get("name") if isinstance(raw.get("name"), str) else path.rsplit(".", 1)[-1]
    notes: list[str] = []
    image = raw.get("image")
    if not isinstance(image, str) or not image:
        notes.append(f"`{path}.image` is not set")
        image = ""
    env, secret_env = _env(raw.get("env"), raw.get("envFrom"), seen, notes)
    return {
        "name": name or f"{place.name}-{cname}",
        "image": image,
        "environment": env,
        "secret_env": secret_env,
        "entrypoint": _words(raw.get("command"), f"{path}.command", notes),
        "command": _words(raw.get("args"), f"{path}.args", notes),
        "healthcheck": _health(raw),
        "ports": _ports(raw.get("ports")),
        "notes": tuple(f"{place.where}: {n}" for n in dict.fromkeys(notes)),
    }


def _ports(value: object) -> tuple[int, ...]:
    ports = []
    for port in value[:MAX_ITEMS] if isinstance(value, list) else []:
        number = port.get("containerPort") if isinstance(port, dict) else None
        if (
            isinstance(number, int)
            and not isinstance(number, bool)
            and 0 < number < 65536
            and port.get("protocol", "TCP") == "TCP"
        ):
            ports.append(number)
    return tuple(dict.fromkeys(ports))


def _health(raw: Mapping[str, Any]) -> tuple[str, ...]:
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        command = at(raw, (probe, "exec", "command"))
        if isinstance(command, list) and command and all(isinstance(w, str) for w in command[:MAX_ITEMS]):
            return ("CMD", *command[:MAX_ITEMS])
    return ()


def _words(value: object, path: str, notes: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(w, (str, int, float)) for w in value[:MAX_ITEMS]):
        notes.append(f"`{path}` is not a list of words: not taken over")
        return ()
    words = tuple(str(w) for w in value[:MAX_ITEMS])
    if any(_EXPANSION.search(w) for w in words):
        notes.append(f"`{path}` uses $(VAR) expansion, which Kubernetes does at run time: not taken over")
        return ()
    return words


def _env(value: object, env_from: object, seen: Seen, notes: list[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """(the environment read, the variables a Secret sets)."""
    env: dict[str, str] = {}
    secrets: list[str] = []
    if env_from is not None:
        notes.append("`envFrom` (whole Secrets or ConfigMaps) is not read")
    if value is None:
        return env, ()
    if not isinstance(value, list):
        notes.append("`env` is not a list: not read")
        return env, ()
    for item in value[:MAX_ITEMS]:
        key = item.get("name") if isinstance(item, dict) else None
        if not isinstance(key, str):
            notes.append("an `env` entry without a name: not read")
            continue
        raw, source = item.get("value"), item.get("valueFrom")
        if isinstance(source, dict):
            text = _value_from(key, source, seen, notes)
            if text is None and isinstance(source.get("secretKeyRef"), dict):
                secrets.append(key)
            elif text is not None:
                env[key] = text
        elif isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
            if _EXPANSION.search(str(raw)):
                notes.append(f"`{key}` uses $(VAR) expansion, which Kubernetes does at run time: left out")
            else:
                env[key] = str(raw)
        elif raw is not None:
            notes.append(f"`{key}` is not a single value: left out")
    return env, tuple(secrets)


def _value_from(key: str, source: Mapping[str, Any], seen: Seen, notes: list[str]) -> str | None:
    secret = source.get("secretKeyRef")
    if isinstance(secret, dict):
        where = f"Secret {secret.get('name')!s}, key {secret.get('key')!s}"
        notes.append(f"`{key}` comes from {where}: not read (the check gives its own password, as a file)")
        return None
    ref = source.get("configMapKeyRef")
    if isinstance(ref, dict):
        data = seen.config_maps.get(str(ref.get("name")))
        if data is not None and ref.get("key") in data:
            return data[str(ref.get("key"))]
        notes.append(f"`{key}` comes from ConfigMap {ref.get('name')!s}, which is not among the manifests: left out")
        return None
    notes.append(f"`{key}` is set by Kubernetes at run time (fieldRef/resourceFieldRef): left out")
    return None
