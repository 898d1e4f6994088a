"""How long a server asks to be left alone: an HTTP `Retry-After` header read without any
I/O, for the container registries (`registry/transport.py`) and the package registries
(`packages/http.py`) alike."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime

RATE_LIMIT_WAIT = 10.0  # seconds a run waits in all, per registry, when asked to (429 Retry-After)


def retry_after(value: str) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds, or an HTTP date); None when
    it says neither."""
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
