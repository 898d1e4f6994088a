"""Whether an image reference is one a registry can be asked for (Docker's grammar,
distribution/reference), and when it is not, why in words with the value shown inert and
cut: `init` leaves such a service out with that line."""

from __future__ import annotations

import re

from ecoready.domain.text import inert

MAX_NAME = 255  # distribution/reference's NameTotalLengthMax: registries refuse longer names
SHOWN = 80  # characters of a refused reference shown
# Docker's reference grammar (distribution/reference): [domain[:port]/]path[:tag][@digest]
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_HOST_PART = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_NAME = rf"(?:{_HOST_PART}(?:\.{_HOST_PART})*(?::[0-9]+)?/)?{_PATH_PART}(?:/{_PATH_PART})*"
_REFERENCE = re.compile(
    rf"^({_NAME})(?::\w[\w.-]{{0,127}})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{{32,}})?$"
)


def reference_problem(image: str) -> str | None:
    """None for a reference a registry can be asked for; else why not, with the value."""
    value = inert(image, SHOWN)
    if not image:
        return "no image"
    if image.startswith("sha256:"):
        return f"{value} is an image id, not a reference a registry is asked for"
    match = _REFERENCE.match(image)
    if match is None:
        name = image.split("@", 1)[0]
        repository = name.rsplit(":", 1)[0] if name.rfind(":") > name.rfind("/") else name
        path = repository.split("/", 1)[1] if "/" in repository and _looks_like_host(repository) else repository
        if path != path.lower():
            return f"{value}: repository names are lower case (Docker's reference grammar)"
        return f"{value} is not an image reference (Docker's grammar: [host[:port]/]path[:tag][@digest])"
    if len(match.group(1)) > MAX_NAME:
        return f"{value}: a repository name of {len(match.group(1))} characters; registries take at most {MAX_NAME}"
    return None


def _looks_like_host(name: str) -> bool:
    first = name.split("/", 1)[0]
    return "." in first or ":" in first or first == "localhost"
