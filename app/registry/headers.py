"""What registries say in their HTTP headers, read without any I/O: auth challenges
(`WWW-Authenticate`), Docker Hub's rate limit (`RateLimit-Limit`/`-Remaining`, whom it
counts). How long to wait (`Retry-After`) is read by `domain/retry_after.py`, shared with the
package registries."""

from __future__ import annotations

import ipaddress
import re

_PARAM = re.compile(r'(\w+)=(?:"([^"]*)"|([^,\s]*))')


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="…",service="…",scope="…"` -> ("bearer", {...})."""
    scheme, _, rest = header.strip().partition(" ")
    params = {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3) for m in _PARAM.finditer(rest)}
    return scheme.lower(), params


def parse_rate_limit(value: str) -> tuple[int | None, int | None]:
    """Docker Hub's `100;w=21600` -> (100, 21600)."""
    count, _, rest = value.partition(";")
    window = re.search(r"w=(\d+)", rest)
    try:
        number = int(count.strip())
    except ValueError:
        number = None
    return number, int(window.group(1)) if window else None


def source_kind(source: str) -> str:
    """Docker Hub counts anonymous pulls by IP and others by account; say which, never the
    value itself (an address or an account id has no place in a shared report)."""
    try:
        ipaddress.ip_address(source.strip())
        return "ip"
    except ValueError:
        return "account"
