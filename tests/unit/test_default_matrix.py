"""The default matrix as shipped: public images only (no lab image, no loopback
registry), every row's probe kind states how far it was verified, tool images are
derived from public bases unless named, and the package ships the repository's
matrix.toml byte for byte (`ecoready` in an empty folder runs it)."""

from __future__ import annotations

from pathlib import Path

from ecoready.domain.model import Verification
from ecoready.matrix.kinds import KINDS, verification
from ecoready.matrix.load import load, shipped_matrix
from ecoready.registry.manifests import parse_reference

ROOT = Path(__file__).resolve().parents[2]
MATRIX = ROOT / "matrix.toml"


def images(path: Path) -> list[str]:
    matrix = load(path, {})
    found = [c.image for c in matrix.components]
    found += [str(v) for c in matrix.components for k, v in c.options.items() if k.endswith("image")]
    found += [image for image in (matrix.sysbench.image, matrix.sysbench.base) if image]
    return found


def test_the_default_matrix_names_public_images_only() -> None:
    text = MATRIX.read_text()
    assert "127.0.0.1" not in text and "/lab/" not in text and "localhost" not in text
    for image in images(MATRIX):
        registry = parse_reference(image).registry
        assert registry in ("docker.io", "container-registry.oracle.com", "ghcr.io", "quay.io"), image


def test_every_row_states_its_probes_verification() -> None:
    said = {}
    for component in load(MATRIX, {}).components:
        found = verification(KINDS[component.probe], component.options)
        assert isinstance(found, Verification), component.id
        said[component.id] = found
    # what the lab cannot run is said to be contract-only
    # and so are the generic rows, whose commands come from the images' documentation
    generic = ("clustercontrol", "orchestrator", "vitess")
    for contract in ("proxysql", "maxscale", "pmm", "pxc-8.4", "xtrabackup-8.4", "mysql-shell", *generic):
        assert said[contract] is Verification.CONTRACT, contract
    # the rows the lab's stand-in serves run on kinds verified there
    lab_rows = ("replication-mariadb", "replication-mysql", "percona-toolkit", "mysqldump-9.7", "mariadb-dump-11.8")
    for lab in ("mysql-9.7", "mariadb-11.8", "haproxy", *lab_rows):
        assert said[lab] is Verification.LAB, lab


def test_sysbench_is_derived_from_a_public_base() -> None:
    sysbench = load(MATRIX, {}).sysbench
    assert sysbench.image == "" and sysbench.base.startswith("debian:") and sysbench.base.endswith("-slim")


def test_the_package_ships_the_repositorys_matrix() -> None:
    shipped = shipped_matrix()
    assert shipped.read_bytes() == MATRIX.read_bytes(), f"copy matrix.toml to {shipped.relative_to(ROOT)}"


def test_init_default_writes_the_shipped_matrix(tmp_path: Path) -> None:
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("ecoready")
    result = subprocess.run([str(exe), "init", "--default"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "matrix.toml").read_bytes() == MATRIX.read_bytes()
    count = len(load(MATRIX, {}).components)
    assert f"wrote matrix.toml: the default matrix shipped with ecoready ({count} components)" in result.stderr
    again = subprocess.run([str(exe), "init", "--default"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "matrix.toml exists: add --force" in again.stderr


def test_every_row_but_the_connectors_has_its_line_and_source_in_components_md() -> None:
    """docs/components.md says what each row's probe checks and where its pin comes from."""
    doc = (ROOT / "docs" / "components.md").read_text()
    table, _, sources = doc.partition("## Pins and their sources")
    for component in load(MATRIX, {}).components:
        if component.probe == "connector":
            continue
        assert f"(`{component.id}`)" in table, component.id
        assert f"`{component.id}`" in sources.partition("\n## ")[0], component.id
