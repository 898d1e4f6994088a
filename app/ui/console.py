"""Where the front ends write: results on stdout, diagnostics on stderr (so `--json -`
pipes cleanly)."""

from __future__ import annotations

import sys

from ecoready.domain.text import inert


def eprint(*parts: object) -> None:
    """A diagnostic line on stderr, flushed at once (progress interleaves with it); what it
    quotes (a path, a registry's answer, a matrix value) cannot drive the terminal."""
    print(inert(" ".join(str(p) for p in parts), 0), file=sys.stderr, flush=True)


def say(*parts: object) -> None:
    """A result line on stdout (what a verb was asked for), made inert like `eprint`."""
    print(inert(" ".join(str(p) for p in parts), 0), flush=True)
