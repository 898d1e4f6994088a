"""Kubernetes manifests -> the stack's services (`services.py`).

Reads a file or a folder of YAML (or JSON) as `kubectl get -o yaml`, `helm template` or a
rendered kustomize build writes it: multi-document files, `List`s, Pods, Deployments,
StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs (every container and init
container), Services (the host names a workload is reached by) and the custom resources of
the operators `operators.py` knows. Nothing else is read and no cluster is contacted.

Read by `yaml_bounded.py` (libyaml's parser where PyYAML has it; JSON by the json module;
`status` and `managedFields`, never read, left out as they are parsed) under a bound of its
own (`MAX_BYTES`: a `kubectl get -o yaml` of 10,000 pods fits), and walked only where the
Kubernetes API puts what is read, each list so far (`MAX_*`): aliases, huge documents and
unknown kinds cost bounded time and memory, and each thing not understood is a line. Secrets are never read: an
environment variable taken from one is left out and said where its value lives.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import read_bounded, read_head
from ecoready.stack.kube_pins import ArchPins, read_pins
from ecoready.stack.operators import read_operator
from ecoready.stack.services import Service
from ecoready.stack.yaml_bounded import compact, is_json, load_all

MAX_BYTES = 160 << 20  # all files together: kubectl's -o json of 10,000 pods is 140 MB
MAX_FILES = 500
MAX_DOCUMENTS = 2000
MAX_ITEMS = 256  # containers, env entries, ports, List items: each list read so far
SUFFIXES = (".yaml", ".yml", ".json")
# the keys that make a Kubernetes object, in any order: top-level YAML keys, or JSON keys
_YAML_KEY = {k: re.compile(rf"^{k}:", re.MULTILINE) for k in ("apiVersion", "kind", "items")}
_JSON_KEY = {k: re.compile(rf'"{k}"\s*:') for k in ("apiVersion", "kind", "items")}
_HEAD = 1 << 20  # what tells a file too large to read whole
SKIPPED = frozenset({"status", "managedFields"})  # what the cluster adds: never read
_EXPANSION = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")
# kind -> where its pod spec lives
WORKLOADS: Mapping[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    **{k: ("spec", "template", "spec") for k in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")},
    "ReplicationController": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
# kinds that run nothing: understood, counted on one line
QUIET = frozenset(
    {
        *("ConfigMap", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Namespace"),
        *("PodDisruptionBudget", "NetworkPolicy", "PersistentVolumeClaim", "PersistentVolume", "StorageClass"),
        *("Ingress", "HorizontalPodAutoscaler", "Endpoints", "EndpointSlice", "LimitRange", "ResourceQuota"),
        *("PriorityClass", "CustomResourceDefinition", "Kustomization"),
    }
)


@dataclass
class _Seen:
    """What the first pass keeps: Services (name -> selector, namespace) and ConfigMaps."""

    services: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    config_maps: dict[str, dict[str, str]] = field(default_factory=dict)
    quiet: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def is_kubernetes(path: Path) -> bool:
    """A folder, or a file holding a Kubernetes object: `apiVersion` and `kind`, or a
    `kind` and `items` (a List), in any order, as YAML's top-level keys or JSON keys
    (compose files have none). A file larger than `MAX_BYTES` is told by its head, so that
    it is refused under the manifests' bound."""
    if path.is_dir():
        return True
    try:  # not a regular file: the compose reader says why
        data = read_head(path, MAX_BYTES + 1, "manifest file")
    except ConfigError:
        return False
    too_large = len(data) > MAX_BYTES
    data = data[:_HEAD] if too_large else data
    keys = _JSON_KEY if is_json(data) else _YAML_KEY
    text = data.decode("utf-8", "replace")
    found = {k for k, pattern in keys.items() if pattern.search(text)}
    return ("kind" in found and ("apiVersion" in found or "items" in found)) or (too_large and bool(found))


def read_kubernetes(path: Path) -> tuple[str, list[Service], list[str]]:
    """(title, services, lines about what was not read) of a manifest file or folder;
    ConfigError (file:line:col) when a file cannot be read or holds broken YAML."""
    texts = list(_texts(path))
    services, notes = parse_kubernetes(texts)
    if not services:
        what = "no workload or operator resource with an image"
        raise ConfigError([Problem(str(path), 1, 1, f"{what}: not Kubernetes manifests ecoready reads")])
    return path.resolve().name if path.is_dir() else path.stem, services, notes


def _texts(path: Path) -> Iterator[tuple[str, str | bytes]]:
    """Each file's bytes (UTF-8 is checked by the parser, at its line:col: no copy)."""
    files = [path] if not path.is_dir() else _files(path)
    total = 0
    for file in files:
        text = compact(read_bounded(file, MAX_BYTES, "manifest file"))
        total += len(text)
        if total > MAX_BYTES:
            raise ConfigError([Problem(str(file), 1, 1, f"the manifests are larger than {MAX_BYTES} bytes together")])
        yield str(file), text


def _files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):  # symlinked folders are not followed
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root, n) for n in sorted(names) if n.endswith(SUFFIXES) and not n.startswith("."))
        if len(found) > MAX_FILES:
            raise ConfigError(
                [Problem(str(folder), 1, 1, f"more than {MAX_FILES} manifest files: give a smaller folder")]
            )
    return found


def _documents(texts: list[tuple[str, str | bytes]]) -> Iterator[tuple[str, object]]:
    count = 0
    for file, text in texts:
        for doc in load_all(text, file, SKIPPED):
            count += 1
            if count > MAX_DOCUMENTS:
                raise ConfigError([Problem(file, 1, 1, f"more than {MAX_DOCUMENTS} documents")])
            yield file, doc


def _objects(docs: Iterator[tuple[str, object]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object, `List`s opened (one level: a List of Lists is not what kubectl writes)."""
    for file, doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            yield file, {"kind": None}
            continue
        items = doc.get("items")
        if isinstance(doc.get("kind"), str) and doc["kind"].endswith("List") and isinstance(items, list):
            for item in items[:MAX_ITEMS]:
                yield file, item if isinstance(item, dict) else {"kind": None}
            if len(items) > MAX_ITEMS:
                yield file, {"kind": None, "_note": f"a List of more than {MAX_ITEMS} items: the rest not read"}
            continue
        yield file, doc


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else "(no name)"


def _owners(obj: Mapping[str, Any]) -> list[tuple[object, object]]:
    """(kind, name) of each of its ownerReferences (what `kubectl get -o yaml` shows)."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return []
    return [(r.get("kind"), r.get("name")) for r in refs[:MAX_ITEMS] if isinstance(r, dict)]


def _namespace(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns if isinstance(ns, str) else ""


def _labels(node: object) -> dict[str, str]:
    if not isinstance(node, dict):
        return {}
    return {k: v for k, v in list(node.items())[:MAX_ITEMS] if isinstance(k, str) and isinstance(v, str)}


def parse_kubernetes(texts: list[tuple[str, str | bytes]]) -> tuple[list[Service], list[str]]:
    """(services, lines about what was not read) of (file name, text) pairs."""
    objects = list(_objects(_documents(texts)))
    seen = _Seen()
    for file, obj in objects:
        _first_pass(file, obj, seen)
    present = {(obj.get("kind"), _name(obj)) for _file, obj in objects}
    owned: dict[str, int] = {}
    services: list[Service] = []
    for file, obj in objects:
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind in QUIET or kind in ("Service", "Secret"):
            continue
        if any(owner in present for owner in _owners(obj)):  # `kubectl get all`: a Deployment's ReplicaSet, Pods
            owned[kind] = owned.get(kind, 0) + 1
            continue
        where = f"{Path(file).name} {kind}/{_name(obj)}"
        if kind in WORKLOADS:
            services.extend(_workload(obj, WORKLOADS[kind], where, seen))
            continue
        operator = read_operator(obj, where)
        if operator is not None:
            services.extend(operator[0])
            seen.notes.extend(operator[1])
        else:
            api = obj.get("apiVersion")
            seen.notes.append(
                f"{where} ({api if isinstance(api, str) else 'no apiVersion'}): a kind ecoready does not read: left out"
            )
    if owned:
        made = ", ".join(f"{n} {kind}" for kind, n in sorted(owned.items()))
        seen.notes.append(f"made by another object among the manifests, read once through it: {made}")
    if seen.quiet:
        counted = ", ".join(f"{n} {kind}" for kind, n in sorted(seen.quiet.items()))
        seen.notes.append(f"nothing runs from these, not checked: {counted}")
    return services, seen.notes


def _first_pass(file: str, obj: Mapping[str, Any], seen: _Seen) -> None:
    kind = obj.get("kind")
    name = _name(obj)
    if not isinstance(kind, str):
        seen.notes.append(
            f"{Path(file).name}: {obj.get('_note') or 'a document that is not a Kubernetes object'}: not read"
        )
    elif kind == "Service":
        spec = obj.get("spec")
        selector = _labels(spec.get("selector") if isinstance(spec, dict) else None)
        seen.services.append((name, _namespace(obj), selector))
    elif kind == "Secret":
        seen.notes.append(f"{Path(file).name} Secret/{name}: not read (its values stay there; the check uses its own)")
    elif kind == "ConfigMap":
        data = obj.get("data")
        seen.config_maps[name] = _labels(data)
        seen.quiet[kind] = seen.quiet.get(kind, 0) + 1
    elif kind in QUIET:
        seen.quiet[kind] = seen.quiet.get(kind, 0) + 1


def _at(node: object, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _workload(obj: Mapping[str, Any], pod_path: tuple[str, ...], where: str, seen: _Seen) -> list[Service]:
    pod = _at(obj, pod_path)
    if not isinstance(pod, dict):
        seen.notes.append(f"{where}: no pod spec at `{'.'.join(pod_path)}`: not read")
        return []
    name, prefix = _name(obj), ".".join(pod_path)
    labels = (
        _labels(_at(obj, (*pod_path[:-1], "metadata", "labels")))
        if len(pod_path) > 1
        else _labels(_at(obj, ("metadata", "labels")))
    )
    pins = read_pins(pod, prefix)
    aliases = _aliases(labels, _namespace(obj), seen)
    services: list[Service] = []
    for key in ("initContainers", "containers"):
        containers = pod.get(key)
        if containers is None:
            continue
        if not isinstance(containers, list):
            seen.notes.append(f"{where}: `{prefix}.{key}` is not a list: not read")
            continue
        for i, container in enumerate(containers[:MAX_ITEMS]):
            main = key == "containers" and i == 0
            single = main and len(containers) == 1
            service = _container(container, f"{prefix}.{key}[{i}]", name, single, where, seen)
            if service is None:
                continue
            services.append(_with(service, pins, where, aliases if main else ()))
    return services


def _with(fields: dict[str, Any], pins: ArchPins, where: str, aliases: tuple[str, ...]) -> Service:
    notes = (*fields.pop("notes"), *(f"{where}: {n}" for n in pins.notes))
    return Service(
        **fields,
        platform=pins.platform,
        pinned_by=f"{' and '.join(pins.by)} ({where})",
        pinned_at=tuple(f"{where}: {p}" for p in pins.places) if pins.platform else (),
        aliases=aliases,
        notes=notes,
    )


def _aliases(labels: Mapping[str, str], namespace: str, seen: _Seen) -> tuple[str, ...]:
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


def _container(raw: object, path: str, workload: str, single: bool, where: str, seen: _Seen) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        seen.notes.append(f"{where}: `{path}` is not a container: not read")
        return None
    cname = raw.get("name") if isinstance(raw.get("name"), str) else path.rsplit(".", 1)[-1]
    name = workload if single else f"{workload}-{cname}"
    notes: list[str] = []
    image = raw.get("image")
    if not isinstance(image, str) or not image:
        notes.append(f"`{path}.image` is not set")
        image = ""
    env = _env(raw.get("env"), raw.get("envFrom"), seen, notes)
    ports = []
    for port in (raw.get("ports") or [])[:MAX_ITEMS] if isinstance(raw.get("ports"), list) else []:
        number = port.get("containerPort") if isinstance(port, dict) else None
        if (
            isinstance(number, int)
            and not isinstance(number, bool)
            and 0 < number < 65536
            and port.get("protocol", "TCP") == "TCP"
        ):
            ports.append(number)
    health: tuple[str, ...] = ()
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        command = _at(raw, (probe, "exec", "command"))
        if isinstance(command, list) and command and all(isinstance(w, str) for w in command[:MAX_ITEMS]):
            health = ("CMD", *command[:MAX_ITEMS])
            break
    return {
        "name": name,
        "image": image,
        "environment": env,
        "entrypoint": _words(raw.get("command"), f"{path}.command", notes),
        "command": _words(raw.get("args"), f"{path}.args", notes),
        "healthcheck": health,
        "ports": tuple(dict.fromkeys(ports)),
        "notes": tuple(f"{where}: {n}" for n in dict.fromkeys(notes)),
    }


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


def _env(value: object, env_from: object, seen: _Seen, notes: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    if env_from is not None:
        notes.append("`envFrom` (whole Secrets or ConfigMaps) is not read")
    if value is None:
        return env
    if not isinstance(value, list):
        notes.append("`env` is not a list: not read")
        return env
    for item in value[:MAX_ITEMS]:
        key = item.get("name") if isinstance(item, dict) else None
        if not isinstance(key, str):
            notes.append("an `env` entry without a name: not read")
            continue
        raw, source = item.get("value"), item.get("valueFrom")
        if isinstance(source, dict):
            text = _value_from(key, source, seen, notes)
            if text is not None:
                env[key] = text
        elif isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
            if _EXPANSION.search(str(raw)):
                notes.append(f"`{key}` uses $(VAR) expansion, which Kubernetes does at run time: left out")
            else:
                env[key] = str(raw)
        elif raw is not None:
            notes.append(f"`{key}` is not a single value: left out")
    return env


def _value_from(key: str, source: Mapping[str, Any], seen: _Seen, notes: list[str]) -> str | None:
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
