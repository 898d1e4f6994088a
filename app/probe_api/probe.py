"""What every probe is, and the failures it raises.

A probe is a small class driven by the runner stage by stage: `start` brings the
component up and proves it is really ready, `smoke` runs named checks through
`ctx.check`, `bench` measures. It asks its ProbeContext for everything (containers,
exec, SQL, backends, secrets) and never imports docker or Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ecoready.domain.errors import Skip
from ecoready.probe_api.handles import Endpoint

if TYPE_CHECKING:
    from ecoready.probe_api.context import ProbeContext


class Probe:
    kind: ClassVar[str] = ""

    def __init__(self, ctx: ProbeContext) -> None:
        self.ctx = ctx
        self.endpoint: Endpoint | None = None

    def images(self) -> tuple[str, ...]:
        """Images the component needs besides its own (e.g. a client image): the image
        stage resolves them too, so a missing one makes the cell `missing`, not `broken`."""
        return ()

    async def start(self) -> None:
        raise NotImplementedError

    async def smoke(self) -> None:
        raise NotImplementedError

    async def bench(self) -> str | None:
        """Measure; the stage's one-line detail. Publishes numbers via ctx.report_bench."""
        raise Skip("no benchmark for this kind")
