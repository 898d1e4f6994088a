"""ecoready's tool images made from public images: the bench stage's sysbench, when the
matrix names no `[sysbench] image`, is Debian's slim image (`[sysbench] base`, a public
multi-arch index) with the distribution's sysbench installed, per arch, on first use. The
install runs as a driver's does (`install_cache`: a container of the base on the default
bridge, committed to a local image `ecoready-cache/driver:<key>` labelled
`ecoready.cache=tool`), so the second run finds it: the key is the base image's id, the
arch and the script. Whatever fails here is ecoready's tool's trouble (`tool-image`), never
the component's.
"""

from __future__ import annotations

import asyncio

from ecoready.domain.blame import Cause
from ecoready.domain.errors import DeadlineExceeded, EcoreadyError, InfraError
from ecoready.domain.text import one_line
from ecoready.matrix.bench_settings import DERIVE_S
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.install_cache import TRUST_ENV, InstallJob, cache_key, install_once

# Debian's sysbench 1.0.20 (its OLTP Lua scripts included); `sleep` is coreutils.
SYSBENCH_SCRIPT = (
    "set -e; export DEBIAN_FRONTEND=noninteractive; "
    "apt-get update -qq; apt-get install -y -qq --no-install-recommends sysbench >/dev/null; "
    "rm -rf /var/lib/apt/lists/*; sysbench --version"
)


# what keeps the sysbench image's public base from being pulled: said as the tool image's
# trouble (with the registry's words), never as the cell's image "not checked"
BASE_UNREACHABLE = (
    Cause.REGISTRY,
    Cause.MIRROR_GAP,
    Cause.MIRROR_BEHIND,
    Cause.MIRROR_DOWN,
    Cause.CREDENTIALS,
    Cause.PULL_STALLED,
)


async def derived_sysbench(ctx: ProbeContext, base: str) -> str:
    """The local image id of sysbench derived from `base` for the cell's arch: cached, or
    made now (one install per key on an engine, as drivers are)."""
    subject = f"sysbench on {base}"
    try:
        info = await ctx.run.images.ensure(base, ctx.arch, for_cell=False)  # not the cell's own image
    except EcoreadyError as exc:
        if isinstance(exc, InfraError) and exc.cause in BASE_UNREACHABLE:
            # the cell's own image was had: "not checked: registry" would be untrue of it
            raise InfraError(
                f"the base image {base} of the sysbench image could not be had: {exc}",
                cause=Cause.TOOL_IMAGE,
                subject=subject,
                behind=exc.cause,
            ) from None
        if isinstance(exc, InfraError):
            raise  # the engine gone or stuck: said as such
        raise InfraError(
            f"the base image {base} of the sysbench image is not usable for {ctx.arch}: {exc}",
            cause=Cause.TOOL_IMAGE,
            subject=subject,
        ) from None
    key = cache_key(info.image_id, ctx.arch, SYSBENCH_SCRIPT)
    async with ctx.run.install_locks.setdefault(key, asyncio.Lock()):
        job = InstallJob(
            runtime_image_id=info.image_id,
            key=key,
            of=subject,
            script=SYSBENCH_SCRIPT,
            env={**TRUST_ENV, **ctx.extra_env},
            name=ctx._name("sysbench-installer"),
            run_labels=ctx.labels("sysbench-installer"),
            timeout=ctx.scaled(DERIVE_S),  # within the stage's budget (plan/cells.bench_budget)
            cache="tool",
        )
        try:
            done = await install_once(ctx.run.host, job)
        except DeadlineExceeded as exc:
            raise InfraError(str(exc), cause=Cause.TOOL_IMAGE, subject=subject) from None
    if not done.image_id:
        output = done.result.stderr + "\n" + done.result.stdout if done.result else ""
        raise InfraError(
            f"installing sysbench into {base} for {ctx.arch} failed: {one_line(output, 200)}",
            cause=Cause.TOOL_IMAGE,
            subject=subject,
        )
    return done.image_id
