"""The peers of `bench/registry.py`: regctl and crane, each driven by a parallel script that
does the work `ecoready images` does, with ecoready's rules, so the answers can be compared.

Per image reference: the tag's manifest; per arch, the entry ecoready would pick from an
index (`index_platforms`, `pick_entry`), that manifest and its config (to catch an index
that mislabels an image); when the arch is missing, the arch-suffixed tags ecoready tries
(`SUFFIXES`), asked together; a tag not found, the repository's tag list. Every manifest
and config is fetched once per run (by digest, shared by every reference that names it),
as ecoready does. One tool process per request, at most `jobs` at once: neither tool
answers several references in one process.

The bench installs a tool it does not find (`install_peers`): regctl and crane with the Go
toolchain (`go install` through the Go module proxy, into `build/gobin`), skopeo from
Debian (`apt-get install -y skopeo`, as root); when it cannot, it stops with one line
saying the command, never printing a table without the peers it exists to compare against:

    GOBIN=$PWD/build/gobin go install github.com/regclient/regclient/cmd/regctl@latest
    GOBIN=$PWD/build/gobin go install github.com/google/go-containerregistry/cmd/crane@latest
    apt-get install -y skopeo

The bench looks in `build/gobin`, `$GOBIN`, `~/go/bin` and `PATH`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecoready.registry.client import SUFFIXES
from ecoready.registry.manifests import Manifest, arch_name, index_platforms, pick_entry

ROOT = Path(__file__).resolve().parents[1]
NOT_FOUND = ("manifest unknown", "not found", "name unknown", "404")


@dataclass(frozen=True)
class Answer:
    """What a contestant says of one (image, arch): the part every tool must agree on."""

    verdict: str  # available, missing, mislabelled
    digest: str = ""  # of the arch's image (available, mislabelled)
    found_as: str = ""  # a suffix tag it was found as

    def __str__(self) -> str:
        return f"{self.verdict} {self.digest[:19]} {self.found_as}".strip()


def from_ecoready(data: Mapping[str, Any]) -> dict[tuple[str, str], Answer]:
    """The answers in `ecoready images --json`."""
    out = {}
    for check in data["checks"]:
        verdict = str(check["verdict"])
        found = str(check.get("found_as") or "")
        out[(str(check["reference"]), str(check["arch"]))] = Answer(
            verdict,
            str(check.get("digest") or "") if verdict != "missing" else "",
            found.removeprefix("tag ") if found.startswith("tag ") else "",
        )
    return out


def find_tool(name: str) -> str | None:
    places = [ROOT / "build" / "gobin", Path(os.environ.get("GOBIN", "/nonexistent")), Path.home() / "go" / "bin"]
    for place in places:
        if (place / name).is_file() and os.access(place / name, os.X_OK):
            return str(place / name)
    return shutil.which(name)


GO_MODULES = {
    "regctl": "github.com/regclient/regclient/cmd/regctl@latest",
    "crane": "github.com/google/go-containerregistry/cmd/crane@latest",
}
DEBIAN_PACKAGES = {"skopeo": "skopeo"}


def install_command(name: str) -> list[str]:
    """The command that installs the peer `name` (its environment: `install_env`)."""
    if name in GO_MODULES:
        go = shutil.which("go") or "/usr/local/go/bin/go"
        return [go, "install", GO_MODULES[name]]
    return ["apt-get", "install", "-y", DEBIAN_PACKAGES[name]]


def install_env() -> dict[str, str]:
    return {**os.environ, "GOBIN": str(ROOT / "build" / "gobin"), "DEBIAN_FRONTEND": "noninteractive"}


def install_peers(names: list[str], say: Callable[[str], None]) -> dict[str, str] | str:
    """Each peer's binary, installed when not found; or, when one cannot be, the one line
    that says which command installs it (the caller stops with it)."""
    found: dict[str, str] = {}
    for name in names:
        binary = find_tool(name)
        if binary is None:
            command = install_command(name)
            shown = ("GOBIN=$PWD/build/gobin " if name in GO_MODULES else "") + " ".join(command)
            say(f"bench: {name} is not installed: {shown}")
            try:
                done = subprocess.run(command, env=install_env(), capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"bench: {name} is needed and could not be installed ({exc}): run `{shown}`"
            binary = find_tool(name)
            if done.returncode != 0 or binary is None:
                why = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
                return f"bench: {name} is needed and could not be installed ({why}): run `{shown}`"
        found[name] = binary
    return found


class Missing(Exception):
    """The registry has no such manifest or repository."""


class Tool:
    """One command per request; `jobs` of them at once."""

    name = ""

    def __init__(self, binary: str, host: str, jobs: int) -> None:
        self.binary = binary
        self.host = host
        self.jobs = jobs
        self.gate = threading.Semaphore(jobs)
        self.calls = 0
        self._lock = threading.Lock()

    def run(self, args: list[str]) -> bytes:
        with self.gate:
            with self._lock:
                self.calls += 1
            done = subprocess.run([self.binary, *args], capture_output=True, check=False, env=self.env())
        if done.returncode == 0:
            return done.stdout
        error = done.stderr.decode(errors="replace").strip()
        if any(word in error.lower() for word in NOT_FOUND):
            raise Missing(error)
        raise RuntimeError(f"{self.name} {' '.join(args)} failed ({done.returncode}): {error[-300:]}")

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def manifest(self, ref: str) -> bytes:
        raise NotImplementedError

    def blob(self, repository: str, digest: str) -> bytes:
        raise NotImplementedError

    def tags(self, repository: str) -> list[str]:
        raise NotImplementedError


class Regctl(Tool):
    name = "regctl"

    def flags(self) -> list[str]:
        return ["--host", f"reg={self.host},tls=disabled"]

    def env(self) -> dict[str, str]:  # no config of the user's is read or written
        return {**os.environ, "REGCTL_CONFIG": "/nonexistent/regctl.json"}

    def manifest(self, ref: str) -> bytes:
        return self.run(["manifest", "get", "--format", "raw-body", *self.flags(), ref])

    def blob(self, repository: str, digest: str) -> bytes:
        return self.run(["blob", "get", *self.flags(), repository, digest])

    def tags(self, repository: str) -> list[str]:
        return self.run(["tag", "ls", *self.flags(), repository]).decode().split()


class Crane(Tool):
    name = "crane"

    def manifest(self, ref: str) -> bytes:
        return self.run(["manifest", "--insecure", ref])

    def blob(self, repository: str, digest: str) -> bytes:
        return self.run(["blob", "--insecure", f"{repository}@{digest}"])

    def tags(self, repository: str) -> list[str]:
        return self.run(["ls", "--insecure", repository]).decode().split()


class _Once:
    """One computation per key, shared by concurrent callers (threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: dict[object, Future[Any]] = {}

    def __call__(self, key: object, make: Callable[[], Any]) -> Any:
        with self._lock:
            future = self._done.get(key)
            mine = future is None
            if future is None:
                future = self._done[key] = Future()
        if mine:
            try:
                future.set_result(make())
            except BaseException as exc:  # handed to every caller
                future.set_exception(exc)
        return future.result()


def answers(tool: Tool, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], Answer]:
    """Every (image, arch) of `wanted` (images named on the lab registry, asked of
    `tool.host`), all at once."""
    once = _Once()

    def on_host(image: str) -> str:
        return f"{tool.host}/{image.split('/', 1)[1]}"

    def manifest(ref: str) -> tuple[str, Manifest] | None:
        def fetch() -> tuple[str, Manifest] | None:
            try:
                body = tool.manifest(ref)
            except Missing:
                return None
            digest = "sha256:" + hashlib.sha256(body).hexdigest()
            return digest, Manifest("", digest, json.loads(body))

        return once(("manifest", ref), fetch)

    def config_arch(repository: str, image: Manifest) -> str:
        digest = str(image.body["config"]["digest"])
        config = once(("blob", digest), lambda: json.loads(tool.blob(repository, digest)))
        return arch_name(str(config.get("architecture", "")))

    def verdict(repository: str, arch: str, top: tuple[str, Manifest], depth: int = 0) -> Answer:
        digest, found = top
        if not found.is_index:
            if config_arch(repository, found) != arch:
                return Answer("missing")
            return Answer("available", digest)
        entry = pick_entry(index_platforms(found.body), arch)
        if entry is None:
            return Answer("missing")
        child_digest = str(entry["digest"])
        child = manifest(f"{repository}@{child_digest}")
        if child is None:
            return Answer("missing")
        if child[1].is_index:
            return verdict(repository, arch, child, depth + 1) if not depth else Answer("missing")
        if config_arch(repository, child[1]) != arch:
            return Answer("mislabelled", child_digest)
        return Answer("available", child_digest)

    def resolve(image: str, arch: str) -> Answer:
        ref = on_host(image)
        repository, _, tag = ref.rpartition(":")
        top = manifest(ref)
        if top is None:
            once(("tags", repository), lambda: _tags_or_none(tool, repository))
            return Answer("missing")
        found = verdict(repository, arch, top)
        if found.verdict != "missing":
            return found
        alts = [f"{tag}-{suffix}" for suffix in SUFFIXES.get(arch, (arch,))]
        with ThreadPoolExecutor(len(alts)) as pool:  # asked together, as ecoready does
            tops = list(pool.map(lambda alt: manifest(f"{repository}:{alt}"), alts))
        for alt, alt_top in zip(alts, tops, strict=True):
            if alt_top is not None:
                other = verdict(repository, arch, alt_top)
                if other.verdict == "available":
                    return Answer("available", other.digest, alt)
        return found

    with ThreadPoolExecutor(len(wanted)) as pool:
        results = list(pool.map(lambda pair: resolve(*pair), wanted))
    return dict(zip(wanted, results, strict=True))


def _tags_or_none(tool: Tool, repository: str) -> list[str] | None:
    try:
        return tool.tags(repository)
    except Missing:
        return None
