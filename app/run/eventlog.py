"""Events as JSON lines (`ECOREADY_EVENT_LOG=PATH`): a record of what a run did, for
debugging, for replaying into the TUI, and for tests that need to know where a run is."""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import IO, Any

from ecoready.domain.events import Event


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def to_line(event: Event) -> str:
    """One event as one JSON line: {"event": "<type>", ...its fields}."""
    return json.dumps({"event": type(event).__name__, **_plain(event)}, ensure_ascii=False)


class EventLog:
    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle

    def write(self, event: Event) -> None:
        self.handle.write(to_line(event) + "\n")
        self.handle.flush()
