"""The tar ecoready puts into containers (engine/archive.py `files_tar`): every file whole,
and nothing after the end-of-archive blocks, which Podman's copier would not read
(buildah#6573: the PUT fails with a broken pipe when the reader exits first)."""

from __future__ import annotations

import io
import tarfile

from ecoready.domain.specs import SecretFile
from ecoready.engine.archive import files_tar

BLOCK = 512


def test_the_archive_ends_with_the_end_blocks_and_no_record_padding() -> None:
    files = (SecretFile("/run/secrets/pw", b"hunter2", 0o600), SecretFile("/etc/x.cnf", b"a" * 700, 0o644))
    archive = files_tar(files)
    # a header and the content's blocks per file, then two zero blocks: nothing else
    assert len(archive) == (1 + 1) * BLOCK + (1 + 2) * BLOCK + 2 * BLOCK
    assert archive[-2 * BLOCK :] == bytes(2 * BLOCK)
    assert len(archive) < tarfile.RECORDSIZE  # Python's own padding would have made it 10 KiB
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        read = {m.name: (m.mode, content(tar, m)) for m in tar.getmembers()}
    assert read == {"run/secrets/pw": (0o600, b"hunter2"), "etc/x.cnf": (0o644, b"a" * 700)}


def content(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    file = tar.extractfile(member)
    assert file is not None, f"{member.name} is not a regular file"
    return file.read()
