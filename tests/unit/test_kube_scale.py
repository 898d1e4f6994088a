"""Large Kubernetes input read whole, nothing dropped without a word (issue 54): a pod of
300 (or 1,100) containers is as many rows; a `kubectl get -o yaml` List of 10,000 objects
has every image it holds in a row or in a line that says why not (replicas of one owner
read once, a rollout's old image said, Services matched through an index); past the rows
one matrix gets (`MAX_SERVICES`), each image left out is named. In-process."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ecoready.stack.kube import parse_kubernetes, read_kubernetes
from ecoready.stack.kube_pod import MAX_SERVICES
from ecoready.stack.mapping import map_services
from ecoready.stack.yaml_bounded import load_all

Obj = dict[str, Any]


def _service(name: str, app: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": {"selector": {"app": app}}}


def _pod(name: str, images: list[str], owner: str | None = None, labels: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "shop", "labels": labels or {"app": name}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "controller": True}]
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": containers},
        "status": {"phase": "Running", "containerStatuses": [{"image": f"docker.io/{images[0]}"}]},
    }


def _images(node: object) -> set[str]:
    """Every `image` a manifest's objects hold outside `status` (a walk that knows nothing of init)."""
    if isinstance(node, dict):
        found = {v for k, v in node.items() if k == "image" and isinstance(v, str)}
        return found.union(*(_images(v) for k, v in node.items() if k != "status"))
    if isinstance(node, list):
        return set().union(*(_images(v) for v in node))
    return set()


def _yaml(items: list[Obj]) -> str:
    """A List as `kubectl get -o yaml` writes it (block style, lists at their key's indentation)."""
    return "apiVersion: v1\nitems:\n" + "".join(_item(item) for item in items) + "kind: List\n"


def _item(item: Obj) -> str:
    return "- " + _block(item, 2).lstrip()


def _block(node: object, indent: int) -> str:
    pad = " " * indent
    if isinstance(node, dict):
        out = ""
        for key, value in node.items():
            if isinstance(value, (dict, list)) and value:
                out += f"{pad}{key}:\n" + _block(value, indent + 2 if isinstance(value, dict) else indent)
            else:
                out += f"{pad}{key}: {json.dumps(value)}\n"
        return out
    assert isinstance(node, list)
    return "".join(f"{pad}- " + _block(v, indent + 2).lstrip() for v in node)


@pytest.mark.parametrize("count", [300, 1100])
def test_every_container_of_a_large_pod_is_a_row(count: int) -> None:
    pod = _pod("big", [f"shop/part{i}:1" for i in range(count)])
    services, notes = parse_kubernetes([("big.json", json.dumps(pod))])
    assert [s.image for s in services] == [f"shop/part{i}:1" for i in range(count)]
    assert not any("left out" in n or "not made rows" in n for n in notes), notes
    assert len(map_services(services).rows) == count


def test_a_list_of_10000_objects_is_read_whole_every_image_found(tmp_path: Path) -> None:
    """kubectl's YAML of 10,000 objects: 1,400 standalone pods (each its own image), 40
    ReplicaSets' 200 pods each (one image each; a rollout in every fourth: its last 50 pods
    run the next version), and 600 Services selecting standalone pods."""
    items: list[Obj] = []
    for n in range(1400):
        items.append(_pod(f"solo-{n}", [f"shop/solo{n}:1.{n % 7}"], labels={"app": f"solo-{n}"}))
    for r in range(40):
        for n in range(200):
            version = 2 if r % 4 == 0 and n >= 150 else 1
            items.append(_pod(f"rs{r}-{n}", [f"shop/web{r}:{version}.0", "prom/mysqld-exporter:v0.15.1"], f"rs{r}"))
    items += [_service(f"s{n}", f"solo-{n * 2}") for n in range(600)]
    assert len(items) == 10_000
    listed = tmp_path / "pods.yaml"
    listed.write_text(_yaml(items))
    (doc,) = load_all(listed.read_bytes(), "pods.yaml")  # the walk's own reading, nothing left out
    assert isinstance(doc, dict) and len(doc["items"]) == 10_000
    start = time.monotonic()
    _title, services, notes = read_kubernetes(listed)
    result = map_services(services)
    elapsed = time.monotonic() - start
    lines = [*notes, *result.undecided]
    rows = {r.image for r in result.rows}
    missing = [i for i in sorted(_images(doc)) if i not in rows and not any(i in line for line in lines)]
    assert not missing
    assert "shop/web0:2.0" not in rows and any("runs shop/web0:2.0, which no row checks" in n for n in notes)
    assert any("Pod of ReplicaSet/rs1: 199 more alike" in n for n in notes)
    assert len(result.rows) == 1400 + 40 * 2
    assert [s.aliases[0] for s in services if s.name == "solo-2"] == ["s1"]
    assert elapsed < 60  # minutes before (a Service looked at for every pod), seconds now


def test_past_the_rows_one_matrix_gets_each_image_left_out_is_named() -> None:
    count = MAX_SERVICES + 5
    pod = _pod("huge", [f"shop/p{i}:1" for i in range(count)])
    services, notes = parse_kubernetes([("huge.json", json.dumps(pod))])
    assert len(services) == MAX_SERVICES
    (line,) = [n for n in notes if "not made rows" in n]
    assert f"more than {MAX_SERVICES} containers to check among the manifests: 5 more not made rows" in line
    assert all(f"shop/p{i}:1" in line for i in range(MAX_SERVICES, count))


def test_a_pod_selected_by_very_many_services_says_the_ones_not_taken() -> None:
    pod = _pod("db", ["mysql:8.4"], labels={"app": "db"})
    listed = {"apiVersion": "v1", "kind": "List", "items": [*(_service(f"s{n}", "db") for n in range(70)), pod]}
    (db,), notes = parse_kubernetes([("l.json", json.dumps(listed))])
    assert db.aliases[:2] == ("s0", "s0.shop") and "s63" in db.aliases and "s64" not in db.aliases
    (line,) = [n for n in notes if "Services select its pods" in n]
    assert "70 Services select its pods: the first 64 give it host names, not these: s64, s65" in line
