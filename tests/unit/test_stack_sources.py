"""How `init --from` reads what users give it, in bounded time and memory: `kubectl get`
output (YAML and JSON), Helm charts, kustomizations, and hostile inputs (exit 2, one line
at file:line:col). helm is not installable here (not in Debian nor PyPI): the Helm path is
run against a stand-in `helm` script on the PATH."""

from __future__ import annotations

import json
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.stack.kube import MAX_BYTES, SKIPPED, is_kubernetes, parse_kubernetes, read_kubernetes
from ecoready.stack.yaml_bounded import COMPACT_FROM, compact, load_all, load_one
from ecoready.stack.yaml_build import MAX_DEPTH, MAX_VALUES
from tests.support.cli import ecoready

DATA = Path(__file__).resolve().parents[1] / "data"
POD = """\
- apiVersion: v1
  kind: Pod
  metadata:
    name: shop-db-{n}
    namespace: shop
    labels: {{app: shop-db}}
    ownerReferences:
    - {{apiVersion: apps/v1, kind: ReplicaSet, name: shop-db-7d9f8c6b5, controller: true}}
  spec:
    containers:
    - name: mysql
      image: mysql:8.4.3
      ports:
      - {{containerPort: 3306, protocol: TCP}}
  status:
    phase: Running
    podIP: 10.244.{a}.{b}
    conditions:
    - {{type: Ready, status: "True", lastTransitionTime: "2026-11-30T09:13:31Z"}}
"""


def pod_list(count: int) -> str:
    items = "".join(POD.format(n=n, a=n // 250, b=n % 250) for n in range(count))
    return f"apiVersion: v1\nitems:\n{items}kind: List\nmetadata:\n  resourceVersion: ''\n"


def test_a_large_kubectl_list_without_aliases_is_read_not_taken_for_a_bomb() -> None:
    text = pod_list(3000)  # 3,000 x ~20 values: 60,000 values, no alias
    start = time.monotonic()
    (doc,) = load_all(text.encode(), "pods.yaml", frozenset({("status",)}))
    assert time.monotonic() - start < 20
    assert isinstance(doc, dict) and len(doc["items"]) == 3000
    assert "status" not in doc["items"][0] and doc["items"][2999]["spec"]["containers"][0]["image"] == "mysql:8.4.3"


def test_a_real_alias_bomb_is_refused_in_bounded_time_and_memory() -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    for n in "bcdefghijk":  # 9**11 values from 400 bytes
        text += f"{n}: &{n} [" + ", ".join([f"*{chr(ord(n) - 1)}"] * 9) + "]\n"
    tracemalloc.start()
    start = time.monotonic()
    with pytest.raises(ConfigError, match=rf"^bomb\.yaml:\d+:\d+: YAML: aliases here expand to more than {MAX_VALUES}"):
        list(load_all(text, "bomb.yaml"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.monotonic() - start < 10 and peak < 20 << 20  # 9**11 values expanded: hours


def test_what_yaml_means_is_kept_merge_keys_anchors_and_types() -> None:
    text = "base: &b {a: 1, b: two}\nx:\n  <<: *b\n  b: own\n  c: 2026-01-02\n  d: '<<'\n  e: [*b, *b]\n"
    data = load_one(text, "m.yaml")
    assert isinstance(data, dict)
    assert data["x"]["a"] == 1 and data["x"]["b"] == "own" and data["x"]["d"] == "<<"
    assert str(data["x"]["c"]) == "2026-01-02" and data["x"]["e"] == [{"a": 1, "b": "two"}] * 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: &a [1, *a]\n", "an alias inside its own anchor"),
        ("a: *nowhere\n", "has no anchor before it"),
        ("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n", f"nested more than {MAX_DEPTH} deep"),
        ("a: !custom x\n", "the tag !custom is not read"),
        ("a: 2026-13-45\n", "not a valid timestamp"),
        ("a: " + "9" * 5000 + "\n", "a number of 5000 digits"),
        ("a: 1\n---\nb: 2\n", "more than one document"),
    ],
    ids=["self-alias", "no-anchor", "deep", "tag", "timestamp", "digits", "two-documents"],
)
def test_hostile_yaml_is_one_line_at_its_place(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=rf"^h\.yaml:\d+:\d+: .*{words}"):
        load_one(text, "h.yaml")


def test_json_is_read_by_the_json_module_and_told_by_its_keys_in_any_order(tmp_path: Path) -> None:
    doc = {"kind": "List", "apiVersion": "v1", "items": [{"kind": "Pod", "apiVersion": "v1", "status": {"x": 1}}]}
    listed = tmp_path / "pods.json"
    listed.write_text(json.dumps(doc, separators=(",", ":")))  # minified: kind before apiVersion
    assert is_kubernetes(listed)
    (read,) = load_all(listed.read_bytes(), "pods.json", frozenset({("status",)}))
    assert read == {"kind": "List", "apiVersion": "v1", "items": [{"kind": "Pod", "apiVersion": "v1"}]}
    number = tmp_path / "n.json"
    number.write_text('{"kind": "Pod",\n "x": ' + "7" * 5000 + "}")
    with pytest.raises(ConfigError, match=r"n\.json:2:7: JSON: a number of 5000 digits"):
        list(load_all(number.read_text(), str(number)))
    flow = load_one("{services: {db: {image: 'mysql:8.4'}}}", "c.yml")  # YAML flow style: not JSON
    assert flow == {"services": {"db": {"image": "mysql:8.4"}}}


def test_a_manifest_over_the_compose_bound_is_read_under_its_own(tmp_path: Path) -> None:
    big = tmp_path / "pods.yaml"
    big.write_text(pod_list(4000))  # about 2 MB: more than a compose file's 1 MiB
    assert is_kubernetes(big)
    services, _notes = parse_kubernetes([(str(big), big.read_bytes())])
    assert services
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as out:
        out.write(b"apiVersion: v1\nkind: List\nitems:\n")
        out.truncate(MAX_BYTES + 10)
    assert is_kubernetes(huge)
    result = ecoready("init", "--from", str(huge), "-o", "-")
    assert result.returncode == 2 and f"a manifest file is at most {MAX_BYTES} bytes" in result.stderr
    assert "compose" not in result.stderr and "Traceback" not in result.stderr


def test_an_alias_into_a_part_left_out_is_refused() -> None:
    text = "kind: Pod\nstatus: &s {a: 1}\nspec: *s\n"
    with pytest.raises(ConfigError, match=r"^p\.yaml:3:7: YAML: the alias \*s is to a part not read"):
        read_kubernetes_text(text)


def read_kubernetes_text(text: str) -> object:
    return parse_kubernetes([("p.yaml", text)])


# -- Helm ------------------------------------------------------------------------------------

STAND_IN_HELM = """\
#!/bin/sh
# a stand-in for `helm template NAME CHART [--values FILE]...`: the tag from the last values file
tag=8.0
while [ $# -gt 0 ]; do
  if [ "$1" = --values ]; then tag=$(sed -n 's/.*tag: "\\(.*\\)"/\\1/p' "$2"); shift; fi
  shift
done
printf 'apiVersion: apps/v1\\nkind: StatefulSet\\nmetadata: {name: shop-db}\\nspec:\\n  template:\\n    spec:\\n'
printf '      containers: [{name: mysql, image: "mysql:%s", ports: [{containerPort: 3306}]}]\\n' "$tag"
"""


def bin_dir(tmp_path: Path, **scripts: str) -> dict[str, str]:
    """A PATH holding only sh, python and the given stand-in scripts."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("sh", "sed", "printf"):
        for base in ("/bin", "/usr/bin"):
            if Path(base, tool).exists():
                (folder / tool).symlink_to(Path(base, tool))
                break
    for name, body in scripts.items():
        (folder / name).write_text(body)
        (folder / name).chmod(0o755)
    return {"PATH": str(folder)}


def test_a_chart_without_helm_is_one_line_saying_how_to_render_it(tmp_path: Path) -> None:
    chart = DATA / "helm" / "shop"
    result = ecoready("init", "--from", str(chart), "-o", "-", env=bin_dir(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "helm is not on the PATH" in result.stderr and "helm template NAME" in result.stderr
    assert "YAML" not in result.stderr  # never an error from inside a template


def test_a_chart_is_rendered_by_helm_with_its_values_files(tmp_path: Path) -> None:
    env = bin_dir(tmp_path, helm=STAND_IN_HELM)
    chart = DATA / "helm" / "shop"
    plain = ecoready("init", "--from", str(chart), "-o", "-", env=env)
    assert plain.returncode == 0, plain.stderr
    assert 'image = "mysql:8.0"' in plain.stdout and "helm template" in plain.stdout
    values = str(DATA / "helm" / "prod-values.yaml")
    prod = ecoready("init", "--from", str(chart), "--values", values, "-o", "-", env=env)
    assert prod.returncode == 0 and 'image = "mysql:8.4.3"' in prod.stdout


def test_a_failing_helm_is_one_line_at_the_chart(tmp_path: Path) -> None:
    env = bin_dir(tmp_path, helm="#!/bin/sh\necho 'Error: parse error at (shop/templates/db.yaml:4)' >&2\nexit 1\n")
    result = ecoready("init", "--from", str(DATA / "helm" / "shop"), "-o", "-", env=env)
    assert result.returncode == 2
    assert "Chart.yaml:1:1: helm template failed: Error: parse error" in result.stderr


# -- kustomize -------------------------------------------------------------------------------


def test_an_overlay_without_kustomize_takes_its_images_and_its_base_once(tmp_path: Path) -> None:
    env = bin_dir(tmp_path)
    overlay = DATA / "kustomize" / "overlays" / "prod"
    for source in (overlay, overlay / "kustomization.yaml"):
        result = ecoready("init", "--from", str(source), "-o", "-", env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("[[components]]") == 1  # base and overlay: one server
        assert 'image = "mysql:8.4.3"' in result.stdout and "mysql:8.0" not in result.stdout


def test_a_kustomization_with_kubectl_is_built_by_it(tmp_path: Path) -> None:
    pod = "kind: Pod\\napiVersion: v1\\nspec: {containers: [{name: m, image: mariadb:11.4}]}"
    kubectl = f"#!/bin/sh\n[ \"$1\" = kustomize ] || exit 3\nprintf '{pod}\\n'\n"
    result = ecoready(
        "init",
        "--from",
        str(DATA / "kustomize" / "overlays" / "prod"),
        "-o",
        "-",
        env=bin_dir(tmp_path, kubectl=kubectl),
    )
    assert result.returncode == 0, result.stderr
    assert 'image = "mariadb:11.4"' in result.stdout and "kustomize build" in result.stdout


def test_what_init_does_not_do_of_a_kustomization_is_said_and_what_kustomize_refuses_is_refused(tmp_path: Path) -> None:
    env = bin_dir(tmp_path)
    base = tmp_path / "base"
    base.mkdir()
    (base / "db.yaml").write_text((DATA / "kustomize" / "base" / "mysql.yaml").read_text())
    (base / "kustomization.yaml").write_text("resources: [db.yaml]\npatches:\n- path: p.yaml\nnamePrefix: x-\n")
    said = ecoready("init", "--from", str(base), "-o", "-", env=env)
    assert said.returncode == 0 and "namePrefix, patches: not applied" in said.stderr
    (base / "kustomization.yaml").write_text("resources: [db.yaml, ../base]\n")
    cycle = ecoready("init", "--from", str(base), "-o", "-", env=env)
    assert cycle.returncode == 2 and "its own base (a cycle)" in cycle.stderr
    (base / "kustomization.yaml").write_text("resources: [../outside.yaml]\n")
    (tmp_path / "outside.yaml").write_text("kind: Pod\n")
    outside = ecoready("init", "--from", str(base), "-o", "-", env=env)
    assert outside.returncode == 2 and "outside the kustomization's folder" in outside.stderr


# -- compose and image references ------------------------------------------------------------


def test_a_port_of_5000_digits_is_exit_2_at_its_place(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yml"
    compose.write_text(
        textwrap.dedent("""\
        services:
          db:
            image: mysql:8.4
            ports:
              - "8080:""")
        + "9" * 5000
        + '"\n'
    )
    result = ecoready("init", "--from", str(compose), "-o", "-")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{compose}:5:15: a number of 5000 digits" in result.stderr


def test_image_references_registries_refuse_are_said_with_the_value_and_why() -> None:
    upper = ecoready("init", "--images", "MySQL:8.4", "-o", "-")
    assert upper.returncode == 2 and "MySQL:8.4: repository names are lower case" in upper.stderr
    long = ecoready("init", "--images", "a" * 5000 + ":1,mysql:8.4", "-o", "-")
    assert long.returncode == 0 and "a repository name of 5000 characters; registries take at most 255" in long.stderr
    assert max(len(line) for line in long.stderr.splitlines()) < 500
    assert 'image = "aaa' not in long.stdout


def test_pxc_server_options_are_said_not_dropped(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yml"
    compose.write_text(
        "services:\n  pxc1:\n    image: percona/percona-xtradb-cluster:8.0\n"
        "    command: --innodb_buffer_pool_size=512M\n    environment: {CLUSTER_NAME: c1}\n"
    )
    result = ecoready("init", "--from", str(compose), "-o", "-")
    assert result.returncode == 0
    assert "its server options (--innodb_buffer_pool_size=512M) are not checked" in result.stderr


def test_a_folder_with_a_base_and_its_overlays_is_built_from_its_one_overlay(tmp_path: Path) -> None:
    env = bin_dir(tmp_path)
    one = ecoready("init", "--from", str(DATA / "kustomize"), "-o", "-", env=env)
    assert one.returncode == 0, one.stderr
    assert one.stdout.count("[[components]]") == 1 and 'image = "mysql:8.4.3"' in one.stdout
    two = tmp_path / "two"
    for part in ("base", "overlays/prod"):
        (two / part).mkdir(parents=True)
        for file in (DATA / "kustomize" / part).iterdir():
            (two / part / file.name).write_text(file.read_text())
    (two / "overlays" / "dev").mkdir()
    (two / "overlays" / "dev" / "kustomization.yaml").write_text("resources: [../../base]\n")
    asked = ecoready("init", "--from", str(two), "-o", "-", env=env)
    assert asked.returncode == 2
    assert "2 kustomizations that are no one's base (overlays/dev, overlays/prod): give one to --from" in asked.stderr


def test_a_large_indented_json_list_is_read_without_its_indentation_as_it_is(tmp_path: Path) -> None:
    (doc,) = load_all(pod_list(100), "pods.yaml")
    assert isinstance(doc, dict)
    doc["items"] = doc["items"] * 120  # 12,000 pods
    listed = tmp_path / "pods.json"
    listed.write_text(json.dumps(doc, indent=4))  # as kubectl -o json indents it
    assert listed.stat().st_size > COMPACT_FROM
    compacted = compact(listed.read_bytes())
    assert isinstance(compacted, str) and len(compacted) < listed.stat().st_size / 2
    assert list(load_all(compacted, "pods.json", SKIPPED)) == list(load_all(listed.read_text(), "pods.json", SKIPPED))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(doc, indent=4).replace('"items": [', '"items": [}', 1))
    with pytest.raises(ConfigError, match=r"broken\.json:\d+:\d+: YAML"):
        read_kubernetes(broken)
