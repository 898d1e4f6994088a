"""Registry credentials where the docker CLI keeps them: `$DOCKER_CONFIG/config.json`
(default `~/.docker/config.json`) with `auths`, `credHelpers` and `credsStore`, the helpers
being the `docker-credential-<name>` programs on PATH.

Secrets stay in memory: they are never printed, logged or written, `Login`'s repr hides
them, and a failing helper is reported by name and exit code only (its output could hold
one). Identity tokens (`identitytoken`, a helper's `<token>` user) are not supported: such
a registry is asked anonymously.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecoready.domain.errors import ConfigError, CredentialError
from ecoready.domain.reading import read_if_there

MAX_CONFIG_BYTES = 1 << 20  # a docker config larger than this is not one

DOCKER_HUB = "docker.io"
HUB_SERVER_URL = "https://index.docker.io/v1/"  # the key docker login uses for Docker Hub
_HUB_NAMES = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"})
HELPER_TIMEOUT = 10.0


@dataclass(frozen=True)
class Login:
    username: str
    secret: str = field(repr=False)


def registry_key(text: str) -> str:
    """`https://index.docker.io/v1/` -> `docker.io`; `http://host:5000/x` -> `host:5000`."""
    host = text.strip()
    for scheme in ("https://", "http://"):
        if host.lower().startswith(scheme):
            host = host[len(scheme) :]
    host = host.split("/", 1)[0].lower()
    return DOCKER_HUB if host in _HUB_NAMES else host


def server_url(registry: str) -> str:
    """What a credential helper is asked for (docker login stores Docker Hub under its v1 URL)."""
    return HUB_SERVER_URL if registry_key(registry) == DOCKER_HUB else registry_key(registry)


def config_path() -> Path:
    base = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    return Path(base) / "config.json"


class DockerCredentials:
    """`lookup(registry)` -> Login or None; blocking (helpers run as programs), cached per run."""

    def __init__(self, path: Path | None = None, *, helper_timeout: float = HELPER_TIMEOUT) -> None:
        self.path = path or config_path()
        self.helper_timeout = helper_timeout
        self._config: dict[str, Any] | None = None
        self._found: dict[str, Login | None] = {}
        self._lock = threading.Lock()

    def __call__(self, registry: str) -> Login | None:
        key = registry_key(registry)
        with self._lock:
            if key not in self._found:
                self._found[key] = self._lookup(key)
            return self._found[key]

    def _load(self) -> dict[str, Any]:
        if self._config is None:
            try:
                raw = read_if_there(self.path, MAX_CONFIG_BYTES, "docker config file")
                data = {} if raw is None else json.loads(raw.decode("utf-8"))
            except ConfigError as exc:
                raise CredentialError(f"cannot read the docker config {exc.problems[0]}") from None
            except (UnicodeDecodeError, ValueError, RecursionError) as exc:
                raise CredentialError(f"cannot read the docker config {self.path}: {type(exc).__name__}") from None
            self._config = data if isinstance(data, dict) else {}
        return self._config

    def _lookup(self, key: str) -> Login | None:
        config = self._load()
        helpers = config.get("credHelpers")
        per_registry = {registry_key(str(k)): str(v) for k, v in helpers.items()} if isinstance(helpers, dict) else {}
        # docker's order: this registry's helper, else the store for all, else the file's auths
        helper = per_registry.get(key) or (str(config["credsStore"]) if config.get("credsStore") else None)
        if helper:
            login = self._from_helper(helper, key)
            if login is not None:
                return login
        return self._from_auths(config.get("auths") or {}, key)

    def _from_auths(self, auths: object, key: str) -> Login | None:
        if not isinstance(auths, dict):
            return None
        for name, entry in auths.items():
            if registry_key(str(name)) != key or not isinstance(entry, dict):
                continue
            if entry.get("auth"):
                try:
                    user, sep, secret = (
                        base64.b64decode(str(entry["auth"]), validate=True).decode("utf-8").partition(":")
                    )
                except (binascii.Error, UnicodeDecodeError, ValueError):
                    raise CredentialError(f"the docker config {self.path} has an unreadable auth for {key}") from None
                if sep and user:
                    return Login(user, secret)
            if entry.get("username") and entry.get("password"):
                return Login(str(entry["username"]), str(entry["password"]))
        return None

    def _from_helper(self, name: str, key: str) -> Login | None:
        program = f"docker-credential-{name}"
        exe = shutil.which(program)
        if exe is None:
            raise CredentialError(f"the credential helper {program} (docker config {self.path}) is not on PATH")
        try:
            result = subprocess.run(
                [exe, "get"],
                input=server_url(key),
                capture_output=True,
                text=True,
                timeout=self.helper_timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CredentialError(f"{program} did not answer within {self.helper_timeout:.0f} s") from None
        except OSError as exc:
            raise CredentialError(f"{program} cannot run: {exc.strerror or type(exc).__name__}") from None
        if result.returncode != 0:
            if "credentials not found" in result.stdout.lower() + result.stderr.lower():
                return None
            raise CredentialError(f"{program} failed (exit {result.returncode})")
        try:
            data = json.loads(result.stdout)
        except ValueError:
            raise CredentialError(f"{program} answered something that is not JSON") from None
        user = str(data.get("Username") or "") if isinstance(data, dict) else ""
        secret = str(data.get("Secret") or "") if isinstance(data, dict) else ""
        if not user or not secret or user == "<token>":
            return None
        return Login(user, secret)
