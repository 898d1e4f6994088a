"""Where a program would be in an image: along the PATH of the image's config, then the
usual sbin and bin folders (servers live in sbin, which a PATH may leave out)."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
USUAL_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/libexec")
MAX_DIRS = 16


def search_dirs(env: Sequence[str]) -> tuple[str, ...]:
    """The folders to look in, in order, from an image's `KEY=value` environment."""
    path = next((item.partition("=")[2] for item in env if item.startswith("PATH=")), DEFAULT_PATH)
    dirs = [posixpath.normpath(d) for d in path.split(":") if d.startswith("/")]
    return tuple(dict.fromkeys([*dirs, *USUAL_DIRS]))[:MAX_DIRS]


def candidates(names: Sequence[str], dirs: Sequence[str]) -> list[str]:
    """Every place to try for one program known by `names` (its first name everywhere first)."""
    return [posixpath.join(d, name) for name in names for d in dirs]
