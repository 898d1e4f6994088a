"""Which engine to use when the matrix names none, found as the docker CLI finds it and said:

1. `DOCKER_HOST` (with `DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH` for tcp://);
2. the context `DOCKER_CONTEXT` names, else the docker config's `currentContext`
   (`$DOCKER_CONFIG/config.json`, default `~/.docker/config.json`): its docker endpoint and
   TLS material from `contexts/meta/<sha256 of name>/meta.json` and `contexts/tls/...`;
3. the default socket (`/var/run/docker.sock`, on Windows Docker Desktop's named pipe),
   and when it is not there, the first well-known socket of another engine that exists
   (engine/engine_kinds.py: rootless Docker, Docker Desktop, OrbStack, Colima, Rancher Desktop,
   Podman).

Only files are read here (small ones, bounded); nothing is connected to. `Sdk.connect`
connects and says the address and `how` in every error.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.errors import ConfigError, EnvironmentProblem
from ecoready.domain.model import TlsFiles
from ecoready.domain.reading import read_if_there
from ecoready.engine.engine_kinds import BY_KEY, DOCKER_ENGINE, KINDS, REMOTE, WINDOWS_PIPE, EngineKind, expand_path

MAX_CONFIG_BYTES = 1 << 20  # a docker config or context file larger than this is not one


@dataclass(frozen=True)
class EngineAddress:
    """Where the engine is, how that was decided, and which kind it looks like from here."""

    url: str
    how: str  # "DOCKER_HOST", "docker context colima (~/.docker/config.json)", ...
    kind: EngineKind
    tls: TlsFiles | None = None
    tried: tuple[str, ...] = ()  # well-known sockets looked for and absent

    def said(self) -> str:
        return f"{self.url} ({self.how})"


def find_engine(
    env: Mapping[str, str] | None = None, *, windows: bool | None = None, kinds: Sequence[EngineKind] = KINDS
) -> EngineAddress:
    """The engine address as the docker CLI would choose it (module docstring); `kinds`:
    whose sockets are tried, the default first. EnvironmentProblem when a named context
    does not exist or its files are not readable."""
    env = os.environ if env is None else env
    windows = sys.platform == "win32" if windows is None else windows
    host = env.get("DOCKER_HOST", "").strip()
    if host:
        return EngineAddress(host, "DOCKER_HOST", kind_of_url(host, env), _env_tls(host, env))
    config_dir = Path(env.get("DOCKER_CONFIG") or Path(_home(env)) / ".docker")
    context, where = env.get("DOCKER_CONTEXT", "").strip(), "DOCKER_CONTEXT"
    if not context:
        context, where = _current_context(config_dir / "config.json"), str(config_dir / "config.json")
    if context and context != "default":
        return _from_context(config_dir, context, where, env)
    return _default(env, windows, kinds)


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or env.get("USERPROFILE") or str(Path.home())


def _expansions(env: Mapping[str, str]) -> dict[str, str]:
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if not runtime and hasattr(os, "getuid"):
        candidate = f"/run/user/{os.getuid()}"
        runtime = candidate if os.path.isdir(candidate) else ""
    return {"HOME": _home(env), "XDG_RUNTIME_DIR": runtime}


def kind_of_url(url: str, env: Mapping[str, str] | None = None) -> EngineKind:
    """The kind an address looks like from here: the product whose well-known socket it
    is; any unix socket else is taken for Docker Engine; tcp:// and ssh:// are remote."""
    env = os.environ if env is None else env
    if not url.startswith("unix://"):
        return DOCKER_ENGINE if url.startswith("npipe://") else REMOTE
    path = url.removeprefix("unix://")
    expand = _expansions(env)
    for kind in KINDS:
        if any(expand_path(t, expand) == path for t in kind.sockets):
            return kind
    return DOCKER_ENGINE


def _env_tls(url: str, env: Mapping[str, str]) -> TlsFiles | None:
    """Client certificates for a tcp:// DOCKER_HOST when DOCKER_TLS_VERIFY is set, from
    DOCKER_CERT_PATH (default ~/.docker), as the docker CLI reads them."""
    if not url.startswith("tcp://") or env.get("DOCKER_TLS_VERIFY", "") in ("", "0"):
        return None
    certs = Path(env.get("DOCKER_CERT_PATH") or Path(_home(env)) / ".docker")
    return TlsFiles(ca=str(certs / "ca.pem"), cert=str(certs / "cert.pem"), key=str(certs / "key.pem"))


def _read_json(path: Path) -> object:
    """A small JSON file; None when it does not exist. EnvironmentProblem when it is not a
    regular file, is too large or is not JSON (it is the user's to fix: say which)."""
    try:
        raw = read_if_there(path, MAX_CONFIG_BYTES, "docker config file")
    except ConfigError as exc:
        raise EnvironmentProblem(f"{path}: {exc.problems[0].message}") from None
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise EnvironmentProblem(f"{path}: not valid JSON ({str(exc)[:120]})") from None


def _current_context(config: Path) -> str:
    data = _read_json(config)
    if isinstance(data, dict):
        value = data.get("currentContext", "")
        return value.strip() if isinstance(value, str) else ""
    return ""


def _from_context(config_dir: Path, name: str, where: str, env: Mapping[str, str]) -> EngineAddress:
    digest = hashlib.sha256(name.encode()).hexdigest()
    meta_path = config_dir / "contexts" / "meta" / digest / "meta.json"
    meta = _read_json(meta_path)
    if meta is None:
        raise EnvironmentProblem(
            f"docker context {name!r} (from {where}) does not exist in {config_dir / 'contexts'}: "
            "`docker context ls` lists the contexts; `docker context use default` goes back to the default"
        )
    endpoint = meta.get("Endpoints", {}).get("docker", {}) if isinstance(meta, dict) else {}
    host = endpoint.get("Host", "") if isinstance(endpoint, dict) else ""
    if not isinstance(host, str) or not host:
        raise EnvironmentProblem(f"docker context {name!r} ({meta_path}) has no docker endpoint")
    tls_dir = config_dir / "contexts" / "tls" / digest / "docker"
    tls = None
    if host.startswith("tcp://") and (tls_dir / "ca.pem").is_file():
        tls = TlsFiles(ca=str(tls_dir / "ca.pem"), cert=str(tls_dir / "cert.pem"), key=str(tls_dir / "key.pem"))
    return EngineAddress(host, f"docker context {name} (from {where})", kind_of_url(host, env), tls)


def _default(env: Mapping[str, str], windows: bool, kinds: Sequence[EngineKind]) -> EngineAddress:
    if windows:
        return EngineAddress(WINDOWS_PIPE, "the default named pipe of Docker Desktop", BY_KEY["docker-desktop"])
    expand = _expansions(env)
    tried: list[str] = []
    default = kinds[0]
    for kind in kinds:
        for template in kind.sockets:
            path = expand_path(template, expand)
            if not path or path in tried:
                continue
            if _is_socket(path):
                how = "the default socket" if kind is default else f"the well-known socket of {kind.name}"
                return EngineAddress(f"unix://{path}", how, kind, tried=tuple(tried))
            tried.append(path)
    return EngineAddress(
        f"unix://{expand_path(default.sockets[0], expand)}",
        "the default socket; no other engine's socket was found",
        default,
        tried=tuple(tried),
    )


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False
