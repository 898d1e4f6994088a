"""The lab's deliberate gaps: images published wrongly in the ways real ones are, so the
availability checks (and the build audit) meet each case in a real registry.

| image (tag `1`)        | what the registry holds                                      |
|------------------------|--------------------------------------------------------------|
| gap-amd64-only         | an index with amd64 only                                     |
| gap-arm64-only         | a single arm64 manifest, no index                            |
| gap-mislabelled        | an index whose arm64 entry is an amd64 image                 |
| gap-attestation        | an OCI index: amd64, arm64 and an unknown/unknown attestation |
| gap-suffix-only        | an index with amd64 only, and a `1-aarch64` tag for arm64     |
| gap-upgrade            | `1`: an index with amd64 only; `2`: amd64 and arm64 (arm64 only in a newer tag) |
| gap-binary-mislabelled | an index and an image config saying arm64 over amd64 layers  |
| gap-parity             | an index of MariaDB 11.8 for amd64 and 10.11 for arm64: both run, not the same (parity) |

They are made from the per-arch MariaDB manifests the lab already publishes
(`amd64/mariadb:10.11`, `arm64/mariadb:10.11`, and the amd64 image's config; gap-parity
also from `amd64/mariadb:11.8`, and only once that is published): blobs are
mounted across repositories and manifests put, nothing is built. Every body is
deterministic, so a tag that already points at it is left alone: a warm `lab build` costs
a few requests.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from ecoready.domain.errors import EnvironmentProblem
from ecoready.lab.oci_writer import OCI_INDEX, IndexEntry, Manifest, RegistryWriter, index_body

GAP_TAG = "1"
SOURCE_NAME, SOURCE_TAG = "mariadb", "10.11"
GAPS = (
    "gap-amd64-only",
    "gap-arm64-only",
    "gap-mislabelled",
    "gap-attestation",
    "gap-suffix-only",
    "gap-upgrade",
    "gap-binary-mislabelled",
    "gap-parity",
)
PARITY_NAME, PARITY_TAG = "mariadb", "11.8"  # gap-parity's amd64 entry: another server version
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"

Log = Callable[[str], None]
Prepare = Callable[[RegistryWriter], None]


@dataclass(frozen=True)
class GapTag:
    repo: str  # lab/gap-...
    tag: str
    media_type: str
    body: bytes
    prepare: Prepare  # makes everything the body refers to exist in `repo`

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.body).hexdigest()


def _manifest(media_type: str, body: bytes) -> Manifest:
    return Manifest(media_type, "sha256:" + hashlib.sha256(body).hexdigest(), body)


def _copy(source: Manifest, source_repo: str, repo: str) -> Prepare:
    def run(writer: RegistryWriter) -> None:
        writer.copy_manifest(source_repo, source.digest, repo)

    return run


def _put(manifest: Manifest, repo: str) -> Prepare:
    def run(writer: RegistryWriter) -> None:
        writer.put_manifest(repo, manifest.digest, manifest.media_type, manifest.body)

    return run


def _mount(source: Manifest, source_repo: str, repo: str) -> Prepare:
    def run(writer: RegistryWriter) -> None:
        for digest in source.blobs():
            writer.mount(repo, digest, source_repo)

    return run


def _blobs(repo: str, *blobs: bytes) -> Prepare:
    def run(writer: RegistryWriter) -> None:
        for blob in blobs:
            writer.put_blob(repo, blob)

    return run


def _all(*steps: Prepare) -> Prepare:
    def run(writer: RegistryWriter) -> None:
        for step in steps:
            step(writer)

    return run


def attestation(subject: Manifest, repo: str) -> tuple[Manifest, bytes, bytes]:
    """A BuildKit-style attestation manifest (an in-toto statement about `subject`) and its
    two blobs (config, statement). Deterministic: no timestamps."""
    statement = json.dumps(
        {
            "_type": "https://in-toto.io/Statement/v0.1",
            "predicateType": "https://spdx.dev/Document",
            "subject": [{"name": repo, "digest": {"sha256": subject.digest.split(":", 1)[1]}}],
            "predicate": {"spdxVersion": "SPDX-2.3", "name": "ecoready lab gap", "packages": []},
        },
        sort_keys=True,
    ).encode()
    statement_digest = "sha256:" + hashlib.sha256(statement).hexdigest()
    config = json.dumps(
        {
            "architecture": "unknown",
            "os": "unknown",
            "config": {},
            "rootfs": {"type": "layers", "diff_ids": [statement_digest]},
        },
        sort_keys=True,
    ).encode()
    body = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": "sha256:" + hashlib.sha256(config).hexdigest(),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.in-toto+json",
                    "digest": statement_digest,
                    "size": len(statement),
                    "annotations": {"in-toto.io/predicate-type": "https://spdx.dev/Document"},
                }
            ],
        },
        indent=2,
    ).encode()
    return _manifest(OCI_MANIFEST, body), config, statement


def relabelled(amd: Manifest, amd_config: bytes, arch: str, variant: str) -> tuple[Manifest, bytes]:
    """A manifest of the amd64 image's layers whose config says `arch` (and a config blob
    that does): everything about it says `arch` except the programs inside."""
    config = json.loads(amd_config)
    config["architecture"] = arch
    config["variant"] = variant
    config_body = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    data = amd.json
    digest = "sha256:" + hashlib.sha256(config_body).hexdigest()
    data["config"] = {**data["config"], "digest": digest, "size": len(config_body)}
    return _manifest(amd.media_type, json.dumps(data, separators=(",", ":")).encode()), config_body


def plan(amd: Manifest, arm: Manifest, amd_config: bytes, newer: Manifest | None = None) -> list[GapTag]:
    """Every tag of every gap, from the per-arch source manifests (and the amd64 config);
    gap-parity from `newer` (amd64/mariadb:11.8) too, when it is published."""
    amd_repo, arm_repo = f"amd64/{SOURCE_NAME}", f"arm64/{SOURCE_NAME}"
    amd_entry = IndexEntry(amd, "linux", "amd64")
    arm_entry = IndexEntry(arm, "linux", "arm64", "v8")
    tags: list[GapTag] = []

    repo = "lab/gap-amd64-only"
    tags.append(GapTag(repo, GAP_TAG, *index_body([amd_entry]), _copy(amd, amd_repo, repo)))

    repo = "lab/gap-arm64-only"
    tags.append(GapTag(repo, GAP_TAG, arm.media_type, arm.body, _mount(arm, arm_repo, repo)))

    # A second manifest for the amd64 image (same config and layers, other bytes), listed
    # as arm64: what an arm64 build that silently produced amd64 binaries publishes.
    repo = "lab/gap-mislabelled"
    fake = _manifest(amd.media_type, json.dumps(amd.json, separators=(",", ":")).encode())
    prepare = _all(_copy(amd, amd_repo, repo), _put(fake, repo))
    tags.append(GapTag(repo, GAP_TAG, *index_body([amd_entry, IndexEntry(fake, "linux", "arm64", "v8")]), prepare))

    repo = "lab/gap-attestation"
    att, att_config, att_statement = attestation(amd, repo)
    att_entry = IndexEntry(
        att,
        "unknown",
        "unknown",
        annotations={"vnd.docker.reference.digest": amd.digest, "vnd.docker.reference.type": "attestation-manifest"},
    )

    media, body = index_body([amd_entry, arm_entry, att_entry], oci=True)
    assert media == OCI_INDEX
    blobs = _blobs(repo, att_config, att_statement)
    prepare = _all(_copy(amd, amd_repo, repo), _copy(arm, arm_repo, repo), blobs, _put(att, repo))
    tags.append(GapTag(repo, GAP_TAG, media, body, prepare))

    repo = "lab/gap-suffix-only"
    tags.append(GapTag(repo, GAP_TAG, *index_body([amd_entry]), _copy(amd, amd_repo, repo)))
    tags.append(GapTag(repo, f"{GAP_TAG}-aarch64", arm.media_type, arm.body, _mount(arm, arm_repo, repo)))

    # arm64 arrives in a later version: what the migration plan's `upgrade to` finds
    repo = "lab/gap-upgrade"
    tags.append(GapTag(repo, GAP_TAG, *index_body([amd_entry]), _copy(amd, amd_repo, repo)))
    both = _all(_copy(amd, amd_repo, repo), _copy(arm, arm_repo, repo))
    tags.append(GapTag(repo, "2", *index_body([amd_entry, arm_entry]), both))
    # The index and the image's config both say arm64, the programs are amd64: what a build
    # that labels without cross-compiling publishes. Only the build audit can tell.
    repo = "lab/gap-binary-mislabelled"
    fake, fake_config = relabelled(amd, amd_config, "arm64", "v8")
    prepare = _all(_copy(amd, amd_repo, repo), _blobs(repo, fake_config), _put(fake, repo))
    tags.append(GapTag(repo, GAP_TAG, *index_body([amd_entry, IndexEntry(fake, "linux", "arm64", "v8")]), prepare))
    # One tag, two servers: amd64 is MariaDB 11.8 (Debian 13), arm64 MariaDB 10.11 (Debian
    # 12). Both are ready; parity finds another version, other packages, a plugin fewer.
    if newer is not None:
        repo = "lab/gap-parity"
        entries = [IndexEntry(newer, "linux", "amd64"), arm_entry]
        both = _all(_copy(newer, f"amd64/{PARITY_NAME}", repo), _copy(arm, arm_repo, repo))
        tags.append(GapTag(repo, GAP_TAG, *index_body(entries), both))
    return tags


def sources(writer: RegistryWriter) -> tuple[Manifest, Manifest, bytes]:
    """The per-arch source manifests and the amd64 image's config."""
    amd = writer.manifest(f"amd64/{SOURCE_NAME}", SOURCE_TAG)
    arm = writer.manifest(f"arm64/{SOURCE_NAME}", SOURCE_TAG)
    config = writer.blob(f"amd64/{SOURCE_NAME}", amd.json["config"]["digest"]) if amd and not amd.is_index else None
    if amd is None or arm is None or amd.is_index or arm.is_index or config is None:
        raise EnvironmentProblem(
            f"the lab's gaps are made from amd64/{SOURCE_NAME}:{SOURCE_TAG} and arm64/{SOURCE_NAME}:{SOURCE_TAG}, "
            f"which the registry lacks: run `ecoready lab build --only {SOURCE_NAME}` first"
        )
    return amd, arm, config


def parity_source(writer: RegistryWriter) -> Manifest | None:
    """gap-parity's amd64 entry (amd64/mariadb:11.8), None while it is not published."""
    found = writer.manifest(f"amd64/{PARITY_NAME}", PARITY_TAG)
    return None if found is None or found.is_index else found


def gap_sources_published(writer: RegistryWriter) -> bool:
    try:
        sources(writer)
    except EnvironmentProblem:
        return False
    return True


def publish_gaps(writer: RegistryWriter, log: Log) -> list[str]:
    """Make every gap tag point at what it should; the tags written (none on a warm lab)."""
    written = []
    try:
        for tag in plan(*sources(writer), parity_source(writer)):
            if writer.digest_of_tag(tag.repo, tag.tag) == tag.digest:
                continue
            tag.prepare(writer)
            writer.put_manifest(tag.repo, tag.tag, tag.media_type, tag.body)
            written.append(f"{tag.repo}:{tag.tag}")
    except (RuntimeError, httpx.HTTPError) as exc:
        raise EnvironmentProblem(f"lab: publishing the gaps failed: {exc}") from None
    if written:
        log(f"lab: published the gaps {', '.join(written)}")
    return written


def gap_status(writer: RegistryWriter) -> list[tuple[str, bool]]:
    """(repo:tag, points at what it should) for every gap tag."""
    try:
        tags: Sequence[GapTag] = plan(*sources(writer), parity_source(writer))
    except EnvironmentProblem:
        return [(f"lab/{name}:{GAP_TAG}", False) for name in GAPS]
    found = [(f"{t.repo}:{t.tag}", writer.digest_of_tag(t.repo, t.tag) == t.digest) for t in tags]
    planned = {t.repo for t in tags}
    return found + [(f"lab/{name}:{GAP_TAG}", False) for name in GAPS if f"lab/{name}" not in planned]
