"""Per-run random passwords and the redactor that keeps them out of every output.

A `Secret` never shows its value in str()/repr(); the value reaches a container only as a
file (`*_FILE` env). Every text that leaves the runner (details, logs, exceptions) passes
through `Secrets.redact`.
"""

from __future__ import annotations

import secrets as _random
import string
import threading

_ALPHABET = string.ascii_letters + string.digits
REDACTED = "[redacted]"
MIN_LENGTH = 24


class Secret:
    __slots__ = ("_value", "name")

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self._value = value

    def reveal(self) -> str:
        """The value, for writing into a secret file. Never log what this returns."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({self.name!r}, {REDACTED})"

    __str__ = __repr__


class Secrets:
    """The secrets of one run: made here, redacted everywhere."""

    def __init__(self) -> None:
        self._values: list[str] = []
        self._lock = threading.Lock()

    def new(self, name: str, length: int = 32) -> Secret:
        value = "".join(_random.choice(_ALPHABET) for _ in range(max(length, MIN_LENGTH)))
        return self.add(name, value)

    def add(self, name: str, value: str) -> Secret:
        """Register a known secret (e.g. a user-given password) so it is redacted too."""
        with self._lock:
            if value and value not in self._values:
                self._values.append(value)
                self._values.sort(key=len, reverse=True)  # longest first: no partial leaks
        return Secret(name, value)

    def redact(self, text: str) -> str:
        if not text:
            return text
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text
