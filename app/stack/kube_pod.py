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

_EXPANSION = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")
JOB_KINDS = frozenset({"Job", "CronJob"})


MAX_SELECTING = 64  # Services whose names a pod takes as host names; more are said
# rows made from all manifests together: a row costs some 50 times the bytes of its
# container's text, so past this many each container's image is said instead (memory)
MAX_SERVICES = 20_000


class Selectors:
    """The Services' selectors, indexed: each distinct selector under its rarest label
    (`key`, `value`), so a pod is matched against the selectors that share a label with it,
    not against every Service (`kubectl get all -A`: thousands of both)."""

    def __init__(self, services: list[tuple[str, str, dict[str, str]]]) -> None:
        by_selector: dict[frozenset[tuple[str, str]], list[int]] = {}
        for i, (_name, _ns, selector) in enumerate(services):
            if selector:
                by_selector.setdefault(frozenset(selector.items()), []).append(i)
        counts: dict[tuple[str, str], int] = {}
        for pairs in by_selector:
            for pair in pairs:
                counts[pair] = counts.get(pair, 0) + 1
        self.index: dict[tuple[str, str], list[tuple[frozenset[tuple[str, str]], list[int]]]] = {}
        for pairs, found in by_selector.items():
            self.index.setdefault(min(pairs, key=lambda p: (counts[p], p)), []).append((pairs, found))
        self.size = len(services)

    def selecting(self, labels: Mapping[str, str]) -> list[int]:
        """The indexes of the Services that select these pod labels, in their order."""
        found: list[int] = []
        for pair in labels.items():
            for selector, services in self.index.get(pair, ()):
                if all(labels.get(k) == v for k, v in selector):
                    found.extend(services)
        return sorted(found)


@dataclass
class Seen:
    """What the first pass keeps: Services (name, namespace, selector) and ConfigMaps."""

    services: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    selectors: Selectors | None = None  # `services` indexed, once they are all seen
    room: int = MAX_SERVICES  # rows still to be made
    over: dict[str, int] = field(default_factory=dict)  # image -> its containers not made rows

    def full(self, container: Mapping[str, Any]) -> bool:
        """Whether no more rows are made: then the container's image is counted as left out."""
        if self.room > 0:
            self.room -= 1
            return False
        image = container.get("image")
        image = image if isinstance(image, str) and image else "(no image)"
        self.over[image] = self.over.get(image, 0) + 1
        return True

    def room_for(self, services: list[Service]) -> list[Service]:
        """As many of `services` (an operator resource's) as rows are still made; the rest counted."""
        for service in services[max(self.room, 0) :]:
            self.over[service.image] = self.over.get(service.image, 0) + 1
        kept = services[: max(self.room, 0)]
        self.room -= len(kept)
        return kept

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
    return {k: v for k, v in node.items() if isinstance(k, str) and isinstance(v, str)}


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
    aliases = _aliases(place.labels, place, seen)
    lists = {key: _containers(pod, key, place, seen) for key in ("containers", "initContainers")}
    main: list[Service] = []
    for i, raw in enumerate(lists["containers"]):
        if seen.full(raw):
            continue
        name = place.name if len(lists["containers"]) == 1 else ""  # one container: the workload's name
        service = _container(raw, f"{place.prefix}.containers[{i}]", name, place, seen)
        if service is not None:
            daemon = _daemon(pod, place.kind, False, raw)
            main.append(_with(service, pins, place, aliases if i == 0 else (), daemon, "a container"))
    images = {s.image: s.name for s in main if s.image}
    inits: list[Service] = []
    for i, raw in enumerate(lists["initContainers"]):
        if seen.full(raw):
            continue
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
    found = []
    for i, item in enumerate(items):
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


def _aliases(labels: Mapping[str, str], place: Pod, seen: Seen) -> tuple[str, ...]:
    """The host names of the Services that select these pod labels (with the cluster's
    longer forms when the namespace is known); past `MAX_SELECTING` Services, said."""
    if seen.selectors is None or seen.selectors.size != len(seen.services):
        seen.selectors = Selectors(seen.services)
    selecting = seen.selectors.selecting(labels)
    names: list[str] = []
    for i in selecting[:MAX_SELECTING]:
        name, ns, _selector = seen.services[i]
        names.append(name)
        ns = ns or place.namespace
        if ns:
            names.extend((f"{name}.{ns}", f"{name}.{ns}.svc", f"{name}.{ns}.svc.cluster.local"))
    if len(selecting) > MAX_SELECTING:
        rest = ", ".join(seen.services[i][0] for i in selecting[MAX_SELECTING:])
        seen.notes.append(
            f"{place.where}: {len(selecting)} Services select its pods: the first {MAX_SELECTING} give it host "
            f"names, not these: {rest}"
        )
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
    for port in value if isinstance(value, list) else []:
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
        if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
            return ("CMD", *command)
    return ()


def _words(value: object, path: str, notes: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(w, (str, int, float)) for w in value):
        notes.append(f"`{path}` is not a list of words: not taken over")
        return ()
    words = tuple(str(w) for w in value)
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
    for item in value:
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
