"""A stack that lives on Kubernetes, end to end as docs/own-stack.md walks through it:
manifests whose images are lab images - a MariaDB StatefulSet pinned to amd64 by a
`nodeSelector`, and a Deployment of an image that publishes no arm64 (a lab gap) pinned by
a node affinity on the older `beta.kubernetes.io/arch` - -> `ecoready init --from` -> a
run on amd64 (native) and arm64 (emulated) -> `ecoready plan`: the nodeSelector can go, the
affinity cannot, each named by its YAML path. No cluster is involved: the manifests are
only read (kept small: three cells start, one of them emulated)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ecoready.matrix.load import load
from tests.support.cli import ecoready

pytestmark = pytest.mark.docker

LAB = "127.0.0.1:5000/lab"
MANIFESTS = textwrap.dedent(
    f"""\
    apiVersion: v1
    kind: Secret
    metadata: {{name: shop-db}}
    stringData: {{root-password: k8s-root-secret}}
    ---
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {{name: db}}
    spec:
      template:
        spec:
          nodeSelector: {{kubernetes.io/arch: amd64}}
          containers:
            - name: mariadb
              image: {LAB}/mariadb:10.11
              env:
                - name: MARIADB_ROOT_PASSWORD
                  valueFrom: {{secretKeyRef: {{name: shop-db, key: root-password}}}}
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: legacy}}
    spec:
      template:
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchExpressions:
                      - {{key: beta.kubernetes.io/arch, operator: In, values: [amd64]}}
          containers:
            - name: legacy
              image: {LAB}/gap-amd64-only:1
              env: [{{name: MARIADB_ALLOW_EMPTY_ROOT_PASSWORD, value: "1"}}]
              ports: [{{containerPort: 3306}}]
    """
)
SELECTOR = 'shop.yaml StatefulSet/db: spec.template.spec.nodeSelector["kubernetes.io/arch"]'
AFFINITY = (
    "shop.yaml Deployment/legacy: spec.template.spec.affinity.nodeAffinity."
    "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
)


@pytest.fixture(scope="module")
def stack(lab_gaps: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("own-stack-k8s")
    manifests = work / "shop.yaml"
    manifests.write_text(MANIFESTS)
    matrix = work / "matrix.toml"
    init = ecoready("init", "--from", str(manifests), "-o", str(matrix))
    out = work / "report.json"
    run = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), timeout=1800)
    plan = ecoready("plan", str(out))
    return {"init": init, "matrix": matrix, "run": run, "report": json.loads(out.read_text()), "plan": plan}


def test_init_keeps_the_pins_and_never_the_secret(stack: dict[str, Any]) -> None:
    assert stack["init"].returncode == 0, stack["init"].stderr
    rows = {c.id: c for c in load(stack["matrix"]).components}
    assert {k: (c.probe, c.platform, c.pinned_at) for k, c in rows.items()} == {
        "db": ("server", "linux/amd64", (SELECTOR,)),
        "legacy": ("command", "linux/amd64", (AFFINITY,)),
    }
    assert "k8s-root-secret" not in stack["matrix"].read_text() and "k8s-root-secret" not in stack["init"].stderr


def test_the_run_and_the_plan_say_which_pins_can_go(stack: dict[str, Any], no_leaks: None) -> None:
    cells = {c["id"]: (c["status"], c["detail"]) for c in stack["report"]["cells"]}
    assert {k: v[0] for k, v in cells.items()} == {
        "db/amd64": "ready",
        "db/arm64": "ready",
        "legacy/amd64": "ready",
        "legacy/arm64": "missing",
    }, cells
    pins = {p["component"]: (p["verdict"], p["why"], p["pinned_at"]) for p in stack["report"]["migration"]["pins"]}
    assert pins == {
        "db": ("drop", "ready on arm64", [SELECTOR]),
        "legacy": ("keep", "arm64: blocked", [AFFINITY]),
    }
    plan = stack["plan"]
    assert plan.returncode == 0, plan.stderr
    escaped = SELECTOR.replace("[", "\\[").replace("]", "\\]")  # Markdown: every value escaped
    assert f"| db | db | linux/amd64 | drop | ready on arm64 | {escaped} |" in plan.stdout
    assert "| legacy | legacy | linux/amd64 | keep | arm64: blocked | shop.yaml Deployment/legacy:" in plan.stdout
