"""The connector probe's smoke programs, one per language, shipped inside ecoready (package
data) and put into the cell's container at run time: a user's own runtime image (the
official python, node, eclipse-temurin, golang images) needs nothing of ours in it.

Every program takes the same command line and prints one JSON line per check
(probes/connector.py). Scripts run under their language's interpreter; Go and Java are
compiled in the runtime image when the driver is installed (`go build`, `javac`), C with
the image's compiler. The lab's connectors image (containers/) copies these same files.
"""

from __future__ import annotations

from importlib import resources

# language -> the program's file in this package
FILES = {
    "python": "smoke-python",
    "nodejs": "smoke-nodejs",
    "php": "smoke-php",
    "perl": "smoke-perl",
    "ruby": "smoke-ruby",
    "go": "smoke.go",
    "java": "EcoreadySmoke.java",
    "c": "smoke.c",
    "cpp": "smoke.cpp",
}


def source(name: str) -> bytes:
    """The bytes of one smoke program (a name of FILES' values)."""
    if name not in FILES.values():
        raise KeyError(name)
    return resources.files(__name__).joinpath(name).read_bytes()
