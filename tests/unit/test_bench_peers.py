"""bench/registry.py's peers: a peer it does not find is installed, and when it cannot be,
the bench stops with one line saying the command, before any measurement. The Go toolchain
here is a stand-in script that fails (the real `go install` needs the Go module proxy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import _registry_peers as peers


def test_a_peer_that_cannot_be_installed_stops_the_bench_with_its_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = tmp_path / "go"
    go.write_text("#!/bin/sh\necho 'go: module lookup disabled by GOPROXY=off' >&2\nexit 1\n")
    go.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(peers, "find_tool", lambda name: None)  # not installed anywhere
    said: list[str] = []
    answer = peers.install_peers(["regctl", "crane"], said.append)
    assert answer == (
        "bench: regctl is needed and could not be installed (go: module lookup disabled by GOPROXY=off): "
        f"run `GOBIN=$PWD/build/gobin {go} install github.com/regclient/regclient/cmd/regctl@latest`"
    )
    assert said == [f"bench: regctl is not installed: GOBIN=$PWD/build/gobin {go} install {peers.GO_MODULES['regctl']}"]


def test_peers_found_are_used_as_they_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("regctl", "crane", "skopeo"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("GOBIN", str(tmp_path))
    monkeypatch.setattr(peers, "ROOT", tmp_path)  # not this checkout's build/gobin
    said: list[str] = []
    assert peers.install_peers(["regctl", "crane", "skopeo"], said.append) == {
        name: str(tmp_path / name) for name in ("regctl", "crane", "skopeo")
    }
    assert said == []
