"""What the app needs from a run: `ecoready.run.session.Session`, or a recorded stream in tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from ecoready.domain.events import Event
from ecoready.matrix.document import Matrix
from ecoready.run.session import RunOptions


class RunSession(Protocol):
    run_id: str

    async def open(self) -> object: ...
    async def run(self) -> None: ...
    async def rerun(self, cell_ids: Iterable[str]) -> None: ...
    async def close(self) -> None: ...


SessionFactory = Callable[[Matrix, RunOptions, Callable[[Event], None]], RunSession]
