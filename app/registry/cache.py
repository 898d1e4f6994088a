"""Registry answers kept on disk between runs, so that a later run asks one HEAD per tag.

Manifests, indexes and config blobs are content-addressed: the bytes of a digest never
change, so they are kept by digest and checked against it on every read (a corrupt or
tampered file is dropped, never believed). Besides them, the digest each tag had last time
(only a hint that the body is probably here: a HEAD confirms it), and whether each registry
answers HEAD on manifests (so a warm run asks one that does not with GET at once). Nothing
else is written: no tokens, no credentials. Any disk problem only turns the cache off.

Location: `$XDG_CACHE_HOME/ecoready/registry` (default `~/.cache/ecoready/registry`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path

from ecoready.domain.errors import ConfigError
from ecoready.domain.reading import read_bounded

MAX_ENTRY = 4 << 20  # distribution's own manifest limit; configs are far smaller
HEAD_MANNERS = ("answers", "refuses")
_DIGEST = re.compile(r"^(sha256|sha512):([0-9a-f]{64,128})\Z")

log = logging.getLogger("ecoready.regcache")


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ecoready" / "registry"


def digest_of(body: bytes, algorithm: str = "sha256") -> str:
    return f"{algorithm}:{hashlib.new(algorithm, body).hexdigest()}"


def matches(digest: str, body: bytes) -> bool | None:
    """Whether `body` has `digest`; None when the algorithm is not one we can check."""
    found = _DIGEST.match(digest)
    if found is None:
        return None
    return digest_of(body, found.group(1)) == digest


class DiskCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.enabled = True

    def _blob_path(self, digest: str) -> Path | None:
        found = _DIGEST.match(digest)
        return self.root / found.group(1) / found.group(2) if found else None

    def _tag_path(self, key: str) -> Path:
        return self.root / "tags" / hashlib.sha256(key.encode()).hexdigest()[:40]

    def get(self, digest: str) -> bytes | None:
        path = self._blob_path(digest)
        if not self.enabled or path is None:
            return None
        try:
            body = read_bounded(path, MAX_ENTRY, "cache entry")
        except ConfigError:  # gone, too large or no regular file: not a hit
            return None
        if matches(digest, body):
            return body
        self._forget(path)
        return None

    def has(self, digest: str) -> bool:
        path = self._blob_path(digest)
        return self.enabled and path is not None and path.is_file()

    def put(self, digest: str, body: bytes) -> None:
        path = self._blob_path(digest)
        if path is None or len(body) > MAX_ENTRY or not matches(digest, body) or path.is_file():
            return
        self._write(path, body)

    def tag(self, key: str) -> str | None:
        """The digest `key` (host/repository:tag) had when last asked, if any."""
        if not self.enabled:
            return None
        try:
            text = read_bounded(self._tag_path(key), 256, "cache entry").decode("ascii").strip()
        except (ConfigError, UnicodeDecodeError):
            return None
        return text if _DIGEST.match(text) else None

    def remember(self, key: str, digest: str) -> None:
        if _DIGEST.match(digest) and self.tag(key) != digest:
            self._write(self._tag_path(key), digest.encode())

    def _manners_path(self, host: str) -> Path:
        return self.root / "registries" / hashlib.sha256(host.encode()).hexdigest()[:40]

    def head_manners(self, host: str) -> str | None:
        """What a registry did with HEAD on manifests when last asked: `answers` or
        `refuses` (405/501, or 404 to a tag GET finds); None when not known."""
        if not self.enabled:
            return None
        try:
            text = read_bounded(self._manners_path(host), 256, "cache entry").decode("ascii").strip()
        except (ConfigError, UnicodeDecodeError):
            return None
        return text if text in HEAD_MANNERS else None

    def remember_head_manners(self, host: str, manners: str) -> None:
        if manners in HEAD_MANNERS and self.head_manners(host) != manners:
            self._write(self._manners_path(host), manners.encode())

    def _write(self, path: Path, data: bytes) -> None:
        if not self.enabled:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, path)  # concurrent runs: a reader sees a whole file or none
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            log.debug("registry cache off: %s", exc)
            self.enabled = False

    def _forget(self, path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass
