"""Kubernetes manifests -> the stack's services (`services.py`).

Reads a file or a folder of YAML (or JSON) as `kubectl get -o yaml`, `helm template` or a
rendered kustomize build writes it: multi-document files, `List`s, Pods, Deployments,
StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs (every container and init
container), Services (the host names a workload is reached by) and the custom resources of
the operators `operator_catalog.py` knows. Nothing else is read and no cluster is contacted.

Read by `yaml_bounded.py` (libyaml's parser where PyYAML has it; JSON by the json module;
`status` and `metadata.managedFields`, never read, left out as they are parsed) under a
bound of its own (`MAX_BYTES`: a `kubectl get -o yaml` of 10,000 pods fits), and walked only
where the Kubernetes API puts what is read, each list whole (no count cap: the bytes and the
reader's alias bound hold the time and memory, every step linear in them): aliases, huge
documents and unknown kinds cost bounded time and memory, and each thing not understood is
a line. A pod spec is read by `kube_pod.py`; an object another one among the manifests made
is read once, through its owner, and an image of it that no row runs is said.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ecoready.domain.errors import ConfigError, Problem
from ecoready.domain.reading import read_bounded, read_head
from ecoready.stack.kube_pins import at
from ecoready.stack.kube_pod import MAX_SERVICES, Pod, Seen, labels_of, read_pod
from ecoready.stack.operators import read_operator, unread_operator
from ecoready.stack.services import Service
from ecoready.stack.yaml_bounded import compact, is_json, load_all

MAX_BYTES = 160 << 20  # all files together: kubectl's -o json of 10,000 pods is 140 MB
MAX_FILES = 500
MAX_DOCUMENTS = 2000
SUFFIXES = (".yaml", ".yml", ".json")
# the keys that make a Kubernetes object, in any order: top-level YAML keys, or JSON keys
_YAML_KEY = {k: re.compile(rf"^{k}:", re.MULTILINE) for k in ("apiVersion", "kind", "items")}
_JSON_KEY = {k: re.compile(rf'"{k}"\s*:') for k in ("apiVersion", "kind", "items")}
_HEAD = 1 << 20  # what a file is told by
# never read, and left out as they are parsed: what the cluster adds, and what init does not
# look at that is large (kubectl's last-applied-configuration annotation, a pod's volumes)
SKIPPED = frozenset(
    {
        *(("status",), ("metadata", "managedFields"), ("metadata", "annotations")),
        *(("spec", "volumes"), ("spec", "template", "metadata", "annotations")),
        *(("spec", "template", "spec", "volumes"), ("spec", "jobTemplate", "spec", "template", "spec", "volumes")),
    }
)
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


def is_kubernetes(path: Path) -> bool:
    """A folder, or a file holding Kubernetes objects: two of `apiVersion`, `kind` and
    `items` (a List), in any order, as YAML's top-level keys or as JSON keys, in its first
    MiB (kubectl writes a List's `kind` after its items; compose files have none of them).
    A file of any size is told so: one over `MAX_BYTES` is then refused as a manifest."""
    if path.is_dir():
        return True
    try:  # not a regular file: the compose reader says why
        data = read_head(path, _HEAD, "manifest file")
    except ConfigError:
        return False
    keys = _JSON_KEY if is_json(data) else _YAML_KEY
    text = data.decode("utf-8", "replace")
    return sum(1 for pattern in keys.values() if pattern.search(text)) >= 2


def read_kubernetes(path: Path) -> tuple[str, list[Service], list[str]]:
    """(title, services, lines about what was not read) of a manifest file or folder;
    ConfigError (file:line:col) when a file cannot be read or holds broken YAML."""
    texts = list(_texts(path))
    services, seen = _parse(texts)
    if not services:
        what = "no workload or operator resource with an image"
        unread = f"; {'; '.join(seen.unread)}" if seen.unread else ""
        raise ConfigError([Problem(str(path), 1, 1, f"{what}: not Kubernetes manifests ecoready reads{unread}")])
    notes = seen.notes
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
            for item in items:
                yield file, item if isinstance(item, dict) else {"kind": None}
            continue
        yield file, doc


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else "(no name)"


def _namespace(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    return ns if isinstance(ns, str) else ""


_Key = tuple[object, str, str]  # (kind, namespace, name)


def _key(obj: Mapping[str, Any]) -> _Key:
    return obj.get("kind"), _namespace(obj), _name(obj)


def _owners(obj: Mapping[str, Any]) -> list[_Key]:
    """(kind, namespace, name) of each of its ownerReferences (what `kubectl get -o yaml`
    shows); an owner is in the object's own namespace (or cluster-wide: namespace '')."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return []
    ns = _namespace(obj)
    return [(r.get("kind"), ns, str(r.get("name"))) for r in refs if isinstance(r, dict)]


def owned_objects(objects: list[tuple[str, dict[str, Any]]]) -> set[int]:
    """The indexes of the objects read through another one among them (`kubectl get all`:
    a Deployment's ReplicaSet and Pods). Owners are matched with their namespace (or
    cluster-wide); owners that lead back to an object (a self-owner, an owner cycle) do not
    drop it: the first object of a cycle stands for the cycle and is read."""
    index: dict[_Key, int] = {}
    for i, (_file, obj) in enumerate(objects):
        index.setdefault(_key(obj), i)
    parent: dict[int, int] = {}
    for i, (_file, obj) in enumerate(objects):
        for kind, ns, name in _owners(obj):
            j = index.get((kind, ns, name), index.get((kind, "", name)))
            if j is not None and j != i:
                parent[i] = j
                break
    root: dict[int, int] = {}
    for i in parent:
        path: list[int] = []
        on_path: dict[int, int] = {}
        j = i
        while j in parent and j not in root and j not in on_path:
            on_path[j] = len(path)
            path.append(j)
            j = parent[j]
        top = root[j] if j in root else min(path[on_path[j] :]) if j in on_path else j
        root.update(dict.fromkeys(path, top))
    return {i for i in parent if root[i] != i}


def parse_kubernetes(texts: list[tuple[str, str | bytes]]) -> tuple[list[Service], list[str]]:
    """(services, lines about what was not read) of (file name, text) pairs."""
    services, seen = _parse(texts)
    return services, seen.notes


def _parse(texts: list[tuple[str, str | bytes]]) -> tuple[list[Service], Seen]:
    objects = list(_objects(_documents(texts)))
    seen = Seen()
    for file, obj in objects:
        _first_pass(file, obj, seen)
    owned_by = owned_objects(objects)
    siblings = replicas(objects, owned_by)
    owned: dict[str, int] = {}
    copies: dict[str, int] = {}
    services: list[Service] = []
    through: list[tuple[str, dict[str, Any]]] = []  # objects read through another one
    for i, (file, obj) in enumerate(objects):
        kind = obj.get("kind")
        if not isinstance(kind, str) or kind in QUIET or kind in ("Service", "Secret"):
            continue
        if i in owned_by:
            owned[kind] = owned.get(kind, 0) + 1
            through.append((file, obj))
        elif i in siblings:
            copies[siblings[i]] = copies.get(siblings[i], 0) + 1
            through.append((file, obj))
        else:
            services.extend(_read_object(file, obj, kind, seen))
    _images_not_run(through, services, seen)
    if owned:
        made = ", ".join(f"{n} {kind}" for kind, n in sorted(owned.items()))
        seen.notes.append(f"made by another object among the manifests, read once through it: {made}")
    for made_by, n in copies.items():
        seen.notes.append(f"{made_by}: {n} more alike, made by one owner not among the manifests: read once")
    if seen.quiet:
        counted = ", ".join(f"{n} {kind}" for kind, n in sorted(seen.quiet.items()))
        seen.notes.append(f"nothing runs from these, not checked: {counted}")
    if seen.over:
        images = ", ".join(f"{image} (x{n})" if n > 1 else image for image, n in seen.over.items())
        seen.notes.append(
            f"more than {MAX_SERVICES} containers to check among the manifests: {sum(seen.over.values())} more "
            f"not made rows (a matrix that large would not run; give it a part at a time): {images}"
        )
    return services, seen


def _images_not_run(through: list[tuple[str, dict[str, Any]]], services: list[Service], seen: Seen) -> None:
    """A line for each image of an object read through another one (its owner, or the first
    of its owner's replicas) that no row runs: a rollout's old ReplicaSet and its Pods, a
    StatefulSet's Pods of two revisions."""
    images = {s.image for s in services}
    for file, obj in through:
        kind = str(obj.get("kind"))
        pod = at(obj, WORKLOADS[kind]) if kind in WORKLOADS else None
        lists = [pod.get(key) for key in ("containers", "initContainers")] if isinstance(pod, dict) else []
        found = {c.get("image") for items in lists if isinstance(items, list) for c in items if isinstance(c, dict)}
        other = {i for i in found if isinstance(i, str) and i} - images
        if other:
            owners = ", ".join(f"{k!s}/{n}" for k, _ns, n in _owners(obj))
            seen.notes.append(
                f"{Path(file).name} {kind}/{_name(obj)} (of {owners}): runs {', '.join(sorted(map(str, other)))}, "
                "which no row checks (read through its owner, whose pods run other images now): "
                "check it with `--images` or a matrix row"
            )


def _read_object(file: str, obj: Mapping[str, Any], kind: str, seen: Seen) -> list[Service]:
    where = f"{Path(file).name} {kind}/{_name(obj)}"
    if kind in WORKLOADS:
        return _workload(obj, kind, where, seen)
    operator = read_operator(obj, where)
    if operator is not None:
        seen.notes.extend(operator[1])
        return seen.room_for(operator[0])
    api = obj.get("apiVersion")
    line = (
        f"{where} ({api if isinstance(api, str) else 'no apiVersion'}): a kind ecoready does not read: left out"
        f"{unread_operator(obj)}"
    )
    seen.notes.append(line)
    seen.unread.append(line)
    return []


def replicas(objects: list[tuple[str, dict[str, Any]]], owned: set[int]) -> dict[int, str]:
    """The objects that are replicas of one read before them (`kubectl get pods`: the Pods of
    a StatefulSet, whose owner is not among the manifests): index -> what they are, e.g.
    `Pod of StatefulSet/mysql`. The first of each owner is read."""
    first: set[tuple[object, str, str, object]] = set()
    found: dict[int, str] = {}
    for i, (_file, obj) in enumerate(objects):
        owners = _owners(obj)
        if i in owned or not owners:
            continue
        kind, ns, name = owners[0]
        key = (obj.get("kind"), ns, name, kind)
        if key in first:
            found[i] = f"{obj.get('kind')!s} of {kind!s}/{name}"
        first.add(key)
    return found


def _first_pass(file: str, obj: Mapping[str, Any], seen: Seen) -> None:
    kind = obj.get("kind")
    name = _name(obj)
    if not isinstance(kind, str):
        seen.notes.append(
            f"{Path(file).name}: {obj.get('_note') or 'a document that is not a Kubernetes object'}: not read"
        )
    elif kind == "Service":
        spec = obj.get("spec")
        selector = labels_of(spec.get("selector") if isinstance(spec, dict) else None)
        seen.services.append((name, _namespace(obj), selector))
    elif kind == "Secret":
        seen.notes.append(f"{Path(file).name} Secret/{name}: not read (its values stay there; the check uses its own)")
    elif kind == "ConfigMap":
        seen.config_maps[name] = labels_of(obj.get("data"))
        seen.quiet[kind] = seen.quiet.get(kind, 0) + 1
    elif kind in QUIET:
        seen.quiet[kind] = seen.quiet.get(kind, 0) + 1


def _workload(obj: Mapping[str, Any], kind: str, where: str, seen: Seen) -> list[Service]:
    pod_path = WORKLOADS[kind]
    pod = at(obj, pod_path)
    if not isinstance(pod, dict):
        seen.notes.append(f"{where}: no pod spec at `{'.'.join(pod_path)}`: not read")
        return []
    labels = labels_of(at(obj, (*pod_path[:-1], "metadata", "labels") if len(pod_path) > 1 else ("metadata", "labels")))
    place = Pod(kind, _name(obj), ".".join(pod_path), where, labels, _namespace(obj))
    return read_pod(pod, place, seen)
