"""Writing to an OCI distribution registry: what the lab needs to publish multi-arch
indexes (and deliberate gaps) without `docker manifest`: read a manifest, mount its blobs
into another repository, put manifests and indexes. Synchronous: the lab is a batch job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from ecoready.registry.manifests import ACCEPT, INDEX_TYPES

DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"


@dataclass(frozen=True)
class Manifest:
    media_type: str
    digest: str
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data

    @property
    def is_index(self) -> bool:
        return self.media_type in INDEX_TYPES

    def blobs(self) -> list[str]:
        data = self.json
        return [data["config"]["digest"], *(layer["digest"] for layer in data.get("layers", []))]


class RegistryWriter:
    def __init__(self, base_url: str, *, auth: httpx.Auth | None = None, timeout: float = 30.0) -> None:
        self.base = base_url.rstrip("/")
        self.http = httpx.Client(timeout=timeout, auth=auth, trust_env=False)

    def close(self) -> None:
        self.http.close()

    def ping(self) -> bool:
        try:
            return self.http.get(f"{self.base}/v2/").status_code in (200, 401)
        except httpx.HTTPError:
            return False

    def manifest(self, repo: str, reference: str) -> Manifest | None:
        response = self.http.get(f"{self.base}/v2/{repo}/manifests/{reference}", headers={"Accept": ACCEPT})
        if response.status_code == 404:
            return None
        response.raise_for_status()
        media = response.headers.get("content-type", "").split(";")[0]
        return Manifest(media, response.headers.get("docker-content-digest", ""), response.content)

    def mount(self, repo: str, digest: str, source_repo: str) -> None:
        if self.http.head(f"{self.base}/v2/{repo}/blobs/{digest}").status_code == 200:
            return
        response = self.http.post(
            f"{self.base}/v2/{repo}/blobs/uploads/", params={"mount": digest, "from": source_repo}
        )
        if response.status_code != 201:
            raise RuntimeError(
                f"cannot mount {digest[:19]} from {source_repo} into {repo}: HTTP {response.status_code}"
            )

    def blob(self, repo: str, digest: str) -> bytes | None:
        """A blob's bytes (checked against its digest), or None when the registry lacks it."""
        response = self.http.get(f"{self.base}/v2/{repo}/blobs/{digest}", follow_redirects=True)
        if response.status_code == 404:
            return None
        response.raise_for_status()
        if "sha256:" + hashlib.sha256(response.content).hexdigest() != digest:
            raise RuntimeError(f"blob {digest[:19]} of {repo} does not match its digest")
        return response.content

    def has_blob(self, repo: str, digest: str) -> bool:
        return self.http.head(f"{self.base}/v2/{repo}/blobs/{digest}").status_code == 200

    def put_blob(self, repo: str, data: bytes) -> str:
        """Upload `data` as a blob of `repo` (monolithic upload); its digest."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if self.has_blob(repo, digest):
            return digest
        started = self.http.post(f"{self.base}/v2/{repo}/blobs/uploads/")
        if started.status_code != 202 or "location" not in started.headers:
            raise RuntimeError(f"cannot start a blob upload to {repo}: HTTP {started.status_code}")
        # the Location carries upload state in its query: add the digest, keep the rest
        location = httpx.URL(self.base).join(started.headers["location"]).copy_merge_params({"digest": digest})
        done = self.http.put(location, content=data, headers={"Content-Type": "application/octet-stream"})
        if done.status_code != 201:
            raise RuntimeError(f"cannot upload blob {digest[:19]} to {repo}: HTTP {done.status_code}")
        return digest

    def digest_of_tag(self, repo: str, tag: str) -> str | None:
        """What `repo:tag` points at now (HEAD), or None."""
        response = self.http.head(f"{self.base}/v2/{repo}/manifests/{tag}", headers={"Accept": ACCEPT})
        if response.status_code == 404:
            return None
        response.raise_for_status()
        digest = response.headers.get("docker-content-digest")
        return str(digest) if digest else None

    def put_manifest(self, repo: str, reference: str, media_type: str, body: bytes) -> str:
        response = self.http.put(
            f"{self.base}/v2/{repo}/manifests/{reference}", content=body, headers={"Content-Type": media_type}
        )
        if response.status_code not in (200, 201):
            raise RuntimeError(
                f"cannot put manifest {repo}:{reference}: HTTP {response.status_code} {response.text[:200]}"
            )
        return response.headers.get("docker-content-digest") or "sha256:" + hashlib.sha256(body).hexdigest()

    def copy_manifest(self, source_repo: str, reference: str, target_repo: str) -> Manifest:
        """Make `source_repo:reference`'s image manifest exist (by digest) in `target_repo`."""
        manifest = self.manifest(source_repo, reference)
        if manifest is None:
            raise RuntimeError(f"{source_repo}:{reference} is not in the registry")
        if self.holds(target_repo, manifest.digest, manifest.digest):
            return manifest
        for digest in manifest.blobs():
            self.mount(target_repo, digest, source_repo)
        self.put_manifest(target_repo, manifest.digest, manifest.media_type, manifest.body)
        return manifest

    def put_index(self, repo: str, tag: str, entries: Sequence[IndexEntry], *, oci: bool = False) -> str:
        """`repo:tag` made this index, unless it is that already: the registry rewrites a
        tag's link on every put, and a reader that meets the link mid-write gets an HTTP 500
        ("invalid checksum digest format"), as `make demo`'s first run did while the next
        wave's build published the same indexes again."""
        media, body = index_body(entries, oci=oci)
        digest = "sha256:" + hashlib.sha256(body).hexdigest()
        if self.holds(repo, tag, digest):
            return digest
        return self.put_manifest(repo, tag, media, body)

    def holds(self, repo: str, reference: str, digest: str) -> bool:
        """Whether `repo:reference` is the manifest `digest` (a HEAD: nothing read but the header)."""
        response = self.http.head(f"{self.base}/v2/{repo}/manifests/{reference}", headers={"Accept": ACCEPT})
        return response.status_code == 200 and response.headers.get("docker-content-digest") == digest


def index_body(entries: Sequence[IndexEntry], *, oci: bool = False) -> tuple[str, bytes]:
    """(media type, bytes) of an index over `entries`; the same entries give the same bytes."""
    media = OCI_INDEX if oci else DOCKER_LIST
    body = json.dumps(
        {"schemaVersion": 2, "mediaType": media, "manifests": [e.descriptor() for e in entries]}, indent=2
    ).encode()
    return media, body


@dataclass(frozen=True)
class IndexEntry:
    manifest: Manifest
    os: str
    architecture: str
    variant: str | None = None
    annotations: Mapping[str, str] | None = None

    def descriptor(self) -> dict[str, Any]:
        platform: dict[str, str] = {"architecture": self.architecture, "os": self.os}
        if self.variant:
            platform["variant"] = self.variant
        out: dict[str, Any] = {
            "mediaType": self.manifest.media_type,
            "digest": self.manifest.digest,
            "size": len(self.manifest.body),
            "platform": platform,
        }
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out
