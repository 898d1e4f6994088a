"""Where the front ends write: results on stdout, diagnostics on stderr (so `--json -`
pipes cleanly)."""

from __future__ import annotations

import sys


def eprint(*parts: object) -> None:
    """A diagnostic line on stderr, flushed at once (progress interleaves with it)."""
    print(*parts, file=sys.stderr, flush=True)
