"""Files put into a container through the engine's archive API (`put_archive`), as one tar:
what `DockerHost.run` copies in before a start and `DockerHost.put_files` later (the bind
mount of engine/filedrop.py, where it applies, needs no archive)."""

from __future__ import annotations

import io
import tarfile
import time
from collections.abc import Iterable

from ecoready.domain.specs import SecretFile


def files_tar(files: Iterable[SecretFile]) -> bytes:
    """A tar of files only: the engine creates missing parent directories (0755, root), and
    leaving existing directories out keeps their owners and modes untouched.

    It ends with the two zero blocks that end an archive, without the zero padding Python
    adds up to a 10 KiB record: Podman's copier stops reading at the end-of-archive blocks
    and exits, so padding still being sent fails the whole PUT with "passing bulk input to
    subprocess: write |1: broken pipe" (buildah#6573), a spurious error under load."""
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for f in files:
            info = tarfile.TarInfo(f.path.strip("/"))
            info.size = len(f.content)
            info.mode = f.mode
            info.mtime = now
            tar.addfile(info, io.BytesIO(f.content))
    return buffer.getvalue()[: tar.offset]  # offset: the end of the end-of-archive blocks
