"""Whether a container listens on a TCP port: what a service without a healthcheck is
judged by."""

from __future__ import annotations

import asyncio

from ecoready.engine.procnet import listening, table_listens
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.handles import Container
from ecoready.probe_api.refusals import matrix_mismatch


async def port_listens(ctx: ProbeContext, container: Container, port: int) -> bool:
    """Read from /proc on this machine when the engine runs here, else from the container's
    own /proc/net (with its `cat`; an image without one cannot be asked: MatrixMismatch)."""
    state = await ctx.state(container)
    seen = await asyncio.to_thread(listening, state.pid, container.id, port) if state.pid else None
    if seen is not None:
        return seen
    result = await ctx.exec(container, ["cat", "/proc/net/tcp", "/proc/net/tcp6"], timeout=ctx.scaled(15))
    if result.stdout.strip():
        return table_listens(result.stdout, port)  # both tables: the second's header is no socket
    if result.exit_code in (126, 127):
        raise matrix_mismatch(
            ctx.cell.component, f"whether port {port} listens cannot be read here: the image has no `cat`"
        )
    return False
