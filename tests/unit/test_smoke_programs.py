"""The connector probe's smoke programs are written once, in the package (probes/smoke/,
`ecoready.probes.smoke`): the wheel ships them, the lab's connectors image and its builder
copy them from there, and the stand-in's runtime images are published under the official
names of what they really are."""

from __future__ import annotations

from pathlib import Path

from ecoready.lab.core import assemble_context
from ecoready.lab.recipes import BUILDERS, IMAGES, SMOKE, containers_dir, files_hash, source_path
from ecoready.probes import smoke
from tests.support.cli import ROOT

PROGRAMS = set(smoke.FILES.values())


def test_every_smoke_program_is_in_the_package_once() -> None:
    folder = ROOT / "probes" / "smoke"
    assert {p.name for p in folder.iterdir() if p.is_file() and p.name != "__init__.py"} == PROGRAMS
    for name in PROGRAMS:
        assert smoke.source(name) == (folder / name).read_bytes()
    # no second copy anywhere in the repository's containers/
    copies = [p for p in (ROOT / "containers").rglob("*") if p.is_file() and p.name in PROGRAMS]
    assert copies == []


def test_the_lab_takes_them_from_the_package() -> None:
    copied = [(path, name) for image in IMAGES for path, name in image.files] + [
        (path, name) for builder in BUILDERS for path, name in builder.files
    ]
    from_package = {Path(path).name for path, _ in copied if path.startswith(f"{SMOKE}/")}
    assert from_package == PROGRAMS  # every program, for the connectors image or its builder
    for path, _ in copied:
        assert source_path(path).is_file(), path
        assert source_path(path).resolve() == (containers_dir() / path).resolve()  # in the checkout


def test_a_context_is_assembled_with_the_files_it_copies_in(tmp_path: Path) -> None:
    (builder,) = BUILDERS
    target = tmp_path / "context"
    assemble_context(containers_dir() / builder.context, target, builder.files)
    assert (target / "Dockerfile").is_file()
    for path, name in builder.files:
        assert (target / name).read_bytes() == source_path(path).read_bytes()
    (connectors,) = [image for image in IMAGES if image.name == "connectors"]
    assemble_context(containers_dir() / connectors.context, target, connectors.files)
    assert (target / "bin" / "smoke-python").read_bytes() == smoke.source("smoke-python")
    assert (target / "bin" / "smoke-java").is_file()  # the lab's own launcher of the Java program


def test_a_changed_smoke_program_changes_the_recipe(tmp_path: Path, monkeypatch) -> None:
    (builder,) = BUILDERS
    before = files_hash(builder.files)
    package = tmp_path / "smoke"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path, _ in builder.files:
        (package / Path(path).name).write_bytes(source_path(path).read_bytes())
        (package / Path(path).name).chmod(source_path(path).stat().st_mode & 0o777)
    monkeypatch.setattr(smoke, "__file__", str(package / "__init__.py"))
    assert files_hash(builder.files) == before  # the same bytes wherever the package is
    (package / "smoke.go").write_bytes(b"package main // changed\n")
    assert files_hash(builder.files) != before


def test_the_stand_in_s_runtimes_are_published_under_the_official_names_of_what_they_are() -> None:
    published = {(repo, tag): image for image in IMAGES for repo, tag in image.upstream}
    python = published[("library/python", "3.13-slim")]
    assert python.suite == "trixie" and "python3" in python.packages  # trixie's Python is 3.13
    full = published[("library/python", "3.13")]
    assert full.on == python.key and "gcc" in full.packages
    node = published[("library/node", "24")]
    assert any(p.startswith("nodejs=24.") for p in node.packages)  # pinned: sid moves
    assert "golang-1.27-go" in published[("library/golang", "1.27")].packages
    assert "openjdk-21-jdk-headless" in published[("library/eclipse-temurin", "21")].packages
    # none of them holds anything of ecoready's: the probe brings its smoke programs
    for key in (("library/python", "3.13-slim"), ("library/node", "24"), ("library/golang", "1.27")):
        assert published[key].files == () and published[key].builder is None
