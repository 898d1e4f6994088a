"""Which lab images a matrix's rows run on, so that `ecoready lab build --matrix M --rows
ID,...` builds those and nothing else, and `make demo` builds in the order its rows need
them (scripts/demo.sh: the servers first, and every row on their images; the rest while
those cells run).

A row needs its own image, its backend's (and that one's backend's), and the bench
stage's sysbench image when the matrix's profile has a bench. An image is the lab's when
its reference names the local registry's `lab/` repository (an image key or one of its
aliases), a stand-in's name under the local registry (`hub/library/mysql:9.7`), or the
upstream name a stand-in serves (`mysql:9.7`, as the default matrix says it, through a
mirror). The deliberate gaps (`lab/gap-*`) are made from both arches of their source."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ecoready.domain.model import Category, Component
from ecoready.lab.gaps import GAPS, PARITY_NAME, PARITY_TAG, SOURCE_NAME, SOURCE_TAG
from ecoready.lab.recipes import IMAGES, REGISTRY, STAND_IN, STAND_IN_BASES, LabImage, stand_in_repository
from ecoready.matrix.document import Matrix


@dataclass(frozen=True)
class Needs:
    images: tuple[LabImage, ...]  # in IMAGES' order
    gaps: bool = False  # a gap row: the gaps are published (from both arches of their source)
    bases: bool = False  # the stand-in's debian:<suite>-slim (a derived sysbench's base)

    def only(self) -> list[str]:
        """What `Lab.build(only=...)` takes for these needs."""
        return [i.key for i in self.images] + (["gaps"] if self.gaps else []) + ([STAND_IN] if self.bases else [])


def _names() -> dict[str, LabImage]:
    """Every name a lab image is published under, without the registry: `lab/<key>`, its
    aliases, and its stand-in names (`hub/library/mysql:9.7`)."""
    names: dict[str, LabImage] = {}
    for image in IMAGES:
        for name, tag in ((image.name, image.tag), *image.aliases):
            names[f"lab/{name}:{tag}"] = image
        for repo, tag in image.upstream:
            names[f"{stand_in_repository(repo)}:{tag}"] = image
    return names


def _under_registry(reference: str) -> str:
    """`reference` as a path of the local registry: its own references lose the registry,
    an upstream name becomes its stand-in's (`mysql:9.7` -> `hub/library/mysql:9.7`)."""
    if reference.startswith(f"{REGISTRY}/"):
        return reference.removeprefix(f"{REGISTRY}/")
    repo, _, tag = reference.rpartition(":")
    if not repo or "/" in tag:
        return reference  # no tag: never the lab's (its images are all tagged)
    repo = repo.removeprefix("docker.io/")
    if "/" not in repo:
        repo = f"library/{repo}"  # Docker Hub's official images
    try:
        return f"{stand_in_repository(repo)}:{tag}"
    except KeyError:
        return reference  # a registry the lab stands in for not


def lab_image_of(reference: str) -> LabImage | None:
    """The lab image `reference` names (its own name, an alias, a stand-in's or upstream's
    name), or None."""
    return _names().get(_under_registry(reference))


def _with_backends(matrix: Matrix, rows: Iterable[str]) -> list[Component]:
    seen: dict[str, Component] = {}
    todo = list(rows)
    while todo:
        component = matrix.component(todo.pop())
        if component.id not in seen:
            seen[component.id] = component
            todo += [component.backend] if component.backend else []
    return list(seen.values())


def needs(matrix: Matrix, rows: Sequence[str]) -> Needs:
    """The lab images, gaps and bases `rows` of `matrix` run on (KeyError: an unknown row)."""
    names = _names()
    references = [c.image for c in _with_backends(matrix, rows)]
    sysbench = matrix.sysbench_image()
    references += [sysbench[0]] if sysbench else []
    found: set[str] = set()
    gaps = bases = False
    for reference in references:
        path = _under_registry(reference)
        if path in names:
            found.add(names[path].key)
        elif (gap := path.removeprefix("lab/").partition(":")[0]) in GAPS:
            gaps = True
            found.add(f"{SOURCE_NAME}:{SOURCE_TAG}")
            if gap == "gap-parity":  # its amd64 entry is another server version
                found.add(f"{PARITY_NAME}:{PARITY_TAG}")
        elif path in {f"{STAND_IN}/library/debian:{suite}-slim" for suite in STAND_IN_BASES}:
            bases = True
    return Needs(tuple(i for i in IMAGES if i.key in found), gaps, bases)


def first_wave(matrix: Matrix) -> list[str]:
    """The rows `make demo` answers first: the servers, and every other row (not a gap)
    that runs on no image but theirs."""
    of_row = {c.id: needs(matrix, [c.id]) for c in matrix.components}
    servers = [c.id for c in matrix.components if c.category is Category.SERVER and not of_row[c.id].gaps]
    theirs = set(needs(matrix, servers).images)
    return [row for row, wanted in of_row.items() if not (wanted.gaps or wanted.bases) and set(wanted.images) <= theirs]
