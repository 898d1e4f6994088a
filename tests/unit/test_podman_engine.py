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
    """docker-py's APIClient as far as `run_healthcheck` uses it."""

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


def test_a_healthcheck_is_due_at_once_then_once_per_interval() -> None:
    runs = dict[str, float]()
    a = attrs(test=["CMD-SHELL", "true"], interval_s=2)
    assert podman.healthcheck_due("c1", a, runs, now=100.0) is True  # at once the first time
    assert podman.healthcheck_due("c1", a, runs, now=101.5) is False  # not due yet
    assert podman.healthcheck_due("c1", a, runs, now=102.0) is True
    assert podman.healthcheck_due("c2", a, runs, now=102.0) is True  # each container its own
    assert runs == {"c1": 102.0, "c2": 102.0}


def test_no_interval_means_the_engines_default() -> None:
    runs = dict[str, float]()
    a = attrs(test=["CMD", "true"])
    assert podman.healthcheck_due("c", a, runs, now=0.0)
    assert not podman.healthcheck_due("c", a, runs, now=podman.DEFAULT_HEALTH_INTERVAL - 1)
    assert podman.healthcheck_due("c", a, runs, now=podman.DEFAULT_HEALTH_INTERVAL)


@pytest.mark.parametrize(
    "container",
    [attrs(test=None), attrs(test=[]), attrs(test=["NONE"]), attrs(test=["CMD", "true"], running=False)],
    ids=["no-healthcheck", "empty-test", "disabled", "not-running"],
)
def test_nothing_is_due_without_a_healthcheck_or_a_running_container(container: dict[str, Any]) -> None:
    runs = dict[str, float]()
    assert podman.healthcheck_due("c", container, runs, now=0.0) is False
    assert runs == {}


def test_a_run_goes_to_libpods_endpoint_and_a_refusal_is_raised() -> None:
    api = FakeApi()
    podman.run_healthcheck(api, "c1")
    assert api.urls == ["/v1.41/libpod/containers/c1/healthcheck"]
    with pytest.raises(docker.errors.APIError):
        podman.run_healthcheck(FakeApi(status=409), "c1")
