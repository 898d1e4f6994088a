"""Events as JSON lines (`ECOREADY_EVENT_LOG=PATH`): a record of what a run did, for
debugging, for replaying into the TUI, and for tests that need to know where a run is."""

from __future__ import annotations

import json
from typing import IO

from ecoready.domain.codec import to_plain
from ecoready.domain.events import Event


def to_line(event: Event) -> str:
    """One event as one JSON line: {"event": "<type>", ...its fields}."""
    return json.dumps({"event": type(event).__name__, **to_plain(event)}, ensure_ascii=False)


class EventLog:
    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle

    def write(self, event: Event) -> None:
        self.handle.write(to_line(event) + "\n")
        self.handle.flush()
