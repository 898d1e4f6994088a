"""`init --from` on a corpus of real Kubernetes manifests (tests/data/k8s-corpus: operators'
resources and deployments, the Kubernetes docs' and e2e suite's MySQL examples, kustomize's),
each with its repository and commit in its first line, against what init should write
for it (expected.yaml, written from the manifest and the operator's own source before init
was run on them). In-process: the reading and mapping `init` does, without the command line.

Every image a file holds is found, by a walk of its own that knows nothing of init, in a
row or in a line that says why it is not one; so is every image its operator provisions
by default."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.matrix.load import load
from ecoready.stack.kube import read_kubernetes
from ecoready.stack.mapping import Row, map_services
from ecoready.stack.yaml_bounded import load_all
from tests.support.cli import ecoready

CORPUS = Path(__file__).parent.parent / "data" / "k8s-corpus"
_LOADED = next(load_all((CORPUS / "expected.yaml").read_text(), "expected.yaml"))
assert isinstance(_LOADED, dict)
EXPECTED: dict[str, dict[str, Any]] = _LOADED
SOURCE = re.compile(r"^# Source: https://github\.com/([^/]+/[^/]+)/blob/([0-9a-f]{40})/\S+$")


def files_of(entry: str) -> list[Path]:
    path = CORPUS / entry
    return sorted(path.rglob("*.yaml")) if path.is_dir() else [path]


def init(entry: str) -> tuple[list[Row], list[str]]:
    """(rows, lines) as `init --from` writes and prints them; a refusal's message is a line."""
    try:
        _title, services, notes = read_kubernetes(CORPUS / entry)
    except ConfigError as error:
        return [], [str(p) for p in error.problems]
    mapped = map_services(services)
    return list(mapped.rows), [*notes, *mapped.undecided]


def images_in(node: object) -> list[str]:
    """Every image string a manifest holds: `image`/`*Image` fields anywhere (containers,
    init containers, CR fields), and each value under an `images` mapping (Vitess)."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and isinstance(key, str) and (key == "image" or key.endswith("Image")):
                found.append(value)
            elif key == "images" and isinstance(value, dict):
                found.extend(v for v in _strings(value))
            else:
                found.extend(images_in(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(images_in(item))
    return found


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    return []


def test_the_corpus_is_real_files_of_at_least_ten_projects_each_with_its_source() -> None:
    projects: set[str] = set()
    files = [f for entry in EXPECTED for f in files_of(entry)]
    assert len(files) >= 30
    for file in files:
        match = SOURCE.match(file.read_text().splitlines()[0])
        assert match is not None, file
        projects.add(match.group(1))
    assert len(projects) >= 10, projects
    on_disk = {p.name for p in CORPUS.iterdir()} - {"expected.yaml"}
    assert on_disk == set(EXPECTED)  # every file has its expected result


@pytest.mark.parametrize("entry", sorted(EXPECTED))
def test_init_writes_the_expected_rows_and_lines(entry: str) -> None:
    expected = EXPECTED[entry]
    rows, lines = init(entry)
    got = {r.id: r for r in rows}
    assert set(got) == set(expected["rows"]), lines
    for rid, want in expected["rows"].items():
        row = got[rid]
        assert (row.probe, row.image, row.backend or None) == (want["probe"], want["image"], want["backend"]), rid
        if "mode" in want:
            assert row.options["mode"] == want["mode"], rid
        for key, value in want.get("env", {}).items():
            assert row.options["env"][key] == value, (rid, key)
    for words in expected["lines"]:
        assert any(all(w in line for w in words) for line in lines), (words, lines)
    # a daemon is never told to exit 0: no generic row of a workload in `run` mode says so
    assert not any('set mode = "service"' in line for line in lines), lines


@pytest.mark.parametrize("entry", sorted(EXPECTED))
def test_every_image_is_a_row_or_a_line_that_says_why_not(entry: str) -> None:
    rows, lines = init(entry)
    images: set[str] = set(EXPECTED[entry].get("defaults", []))
    for file in files_of(entry):
        for doc in load_all(file.read_text(), str(file)):
            if isinstance(doc, dict) and doc.get("kind") != "Secret":
                images.update(images_in(doc))
    for image in sorted(images):
        in_row = any(r.image == image for r in rows)
        assert in_row or any(image in line for line in lines), (image, lines)


def test_the_whole_corpus_as_one_folder_writes_a_matrix_that_validates(tmp_path: Path) -> None:
    """The command line end to end, once for all files (names that meet get `-2`, ...)."""
    folder = tmp_path / "corpus"
    shutil.copytree(CORPUS, folder, ignore=shutil.ignore_patterns("expected.yaml"))
    out = tmp_path / "matrix.toml"
    result = ecoready("init", "--from", str(folder), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert ecoready("validate", str(out)).returncode == 0
    rows = load(out).components
    # each file's rows, none lost nor merged with another file's
    assert len({r.id for r in rows}) == len(rows) == sum(len(e["rows"]) for e in EXPECTED.values())
