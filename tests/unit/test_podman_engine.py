"""The limits containers ask for on Podman, and when ecoready runs a container's
healthcheck itself there (app/engine/podman.py). The real engine:
tests/integration/test_podman.py."""

from __future__ import annotations

from typing import Any

import docker.errors
import pytest
from docker.types import HostConfig

from ecoready.engine import podman


def test_the_limits_fit_the_create_call() -> None:
    config = HostConfig(version="1.41", ulimits=podman.ulimits())
    assert config["Ulimits"] == [
        {"Name": "nofile", "Soft": 1024, "Hard": 1024},
        {"Name": "nproc", "Soft": 4096, "Hard": 4096},
    ]
    assert all(soft <= hard for _, soft, hard in podman.ULIMITS)


class FakeApi:
    """docker-py's APIClient as far as `run_due_healthcheck` uses it."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.urls: list[str] = []

    def _url(self, path: str, *args: str) -> str:
        return "/v1.41" + path.format(*args)

    def _get(self, url: str) -> str:
        self.urls.append(url)
        return url

    def _raise_for_status(self, response: str) -> None:
        if self.status != 200:
            raise docker.errors.APIError(f"{self.status} refused")


def attrs(*, test: list[str] | None, interval_s: float = 0, running: bool = True) -> dict[str, Any]:
    check = {"Test": test, "Interval": int(interval_s * 1e9)} if test is not None else None
    return {"Config": {"Healthcheck": check}, "State": {"Running": running}}


def test_a_due_healthcheck_runs_through_libpods_endpoint_once_per_interval() -> None:
    api, runs = FakeApi(), dict[str, float]()
    a = attrs(test=["CMD-SHELL", "true"], interval_s=2)
    assert podman.run_due_healthcheck(api, "c1", a, runs, now=100.0) is True  # at once the first time
    assert api.urls == ["/v1.41/libpod/containers/c1/healthcheck"]
    assert podman.run_due_healthcheck(api, "c1", a, runs, now=101.5) is False  # not due yet
    assert podman.run_due_healthcheck(api, "c1", a, runs, now=102.0) is True
    assert len(api.urls) == 2
    assert podman.run_due_healthcheck(api, "c2", a, runs, now=102.0) is True  # each container its own


def test_no_interval_means_the_engines_default() -> None:
    api, runs = FakeApi(), dict[str, float]()
    a = attrs(test=["CMD", "true"])
    assert podman.run_due_healthcheck(api, "c", a, runs, now=0.0)
    assert not podman.run_due_healthcheck(api, "c", a, runs, now=podman.DEFAULT_HEALTH_INTERVAL - 1)
    assert podman.run_due_healthcheck(api, "c", a, runs, now=podman.DEFAULT_HEALTH_INTERVAL)


@pytest.mark.parametrize(
    "container",
    [attrs(test=None), attrs(test=[]), attrs(test=["NONE"]), attrs(test=["CMD", "true"], running=False)],
    ids=["no-healthcheck", "empty-test", "disabled", "not-running"],
)
def test_nothing_runs_without_a_healthcheck_or_a_running_container(container: dict[str, Any]) -> None:
    api = FakeApi()
    assert podman.run_due_healthcheck(api, "c", container, {}) is False
    assert api.urls == []


def test_a_refused_run_counts_as_not_run() -> None:
    """The container stopped between the inspect and the run: the engine's health stands."""
    api = FakeApi(status=409)
    assert podman.run_due_healthcheck(api, "c", attrs(test=["CMD", "true"]), {}) is False
