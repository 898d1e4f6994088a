"""The sysbench image's public base that cannot be pulled (`probe_api/tool_images.py`): the
cell's own image was had, started and smoked, so the failure is said as the tool image's,
with the registry's words behind it, and never counted among the cells a registry left
"not checked"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ecoready.domain.blame import Cause
from ecoready.domain.errors import DockerUnavailable, InfraError, MirrorGap, RegistryError
from ecoready.domain.model import Stage
from ecoready.probe_api.tool_images import derived_sysbench


class Images:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.asked: list[dict[str, Any]] = []

    async def ensure(self, reference: str, arch: str, **kwargs: Any) -> None:
        self.asked.append({"reference": reference, "arch": arch, **kwargs})
        raise self.error


def context(error: Exception) -> Any:
    return SimpleNamespace(arch="amd64", run=SimpleNamespace(images=Images(error)))


@pytest.mark.parametrize(
    ("error", "behind"),
    [
        (RegistryError("docker.io", "unreachable (cannot resolve the name)"), Cause.REGISTRY),
        (MirrorGap("127.0.0.1:5000/hub", "has no debian:trixie-slim"), Cause.MIRROR_GAP),
    ],
)
async def test_an_unreachable_base_is_the_tool_image_s_trouble(error: RegistryError, behind: Cause) -> None:
    ctx = context(error)
    with pytest.raises(InfraError) as raised:
        await derived_sysbench(ctx, "debian:trixie-slim")
    blame = raised.value.blame(Stage.BENCH)
    assert blame.cause is Cause.TOOL_IMAGE and blame.subject == "sysbench on debian:trixie-slim"
    assert blame.behind is error.cause
    assert "the base image debian:trixie-slim of the sysbench image could not be had" in raised.value.detail
    assert error.reason in raised.value.detail
    assert ctx.run.images.asked == [{"reference": "debian:trixie-slim", "arch": "amd64", "for_cell": False}]


async def test_an_engine_gone_stays_the_engine_s() -> None:
    with pytest.raises(DockerUnavailable):
        await derived_sysbench(context(DockerUnavailable("gone")), "debian:trixie-slim")
