"""What every probe is, and the failures it raises.

A probe is a small class driven by the runner stage by stage: `start` brings the
component up and proves it is really ready, `smoke` runs named checks through
`ctx.check`, `bench` measures. It asks its ProbeContext for everything (containers,
exec, SQL, backends, secrets) and never imports docker or Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from app.context import Container, ProbeContext
    from app.secrets import Secret


class StageFailed(Exception):
    """The component failed the stage (its fault): start -> broken, smoke -> partial."""


class EmulatorTooOld(StageFailed):
    """The emulator cannot run the image (`Fatal glibc error: CPU does not support
    x86-64-v2`): an old qemu-user defaults to a CPU model without the features Oracle
    Linux 9 / UBI 9 binaries need. The runner retries the start once with QEMU_CPU=max."""

    def __init__(self, level: str, detail: str = "") -> None:
        self.level = level
        super().__init__(detail or f"the emulator is too old: CPU does not support {level}")


class CheckFailed(Exception):
    """One named check failed; the detail says why."""


class Skip(Exception):
    """The stage does not apply (e.g. no benchmark for this kind)."""


@dataclass(frozen=True)
class Endpoint:
    """How other containers on the cell network reach a SQL server this probe started."""

    host: str  # network alias
    port: int
    user: str
    password: Secret
    container: Container  # the server's own container: has a client binary
    flavor: str = "mariadb"


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

    async def bench(self) -> None:
        raise Skip("no benchmark for this kind")
