"""An image's installed packages from its package database, read as files (never by running
a package manager): dpkg's `status`, apk's `installed`, rpm's `rpmdb.sqlite` (its headers'
name, epoch, version and release). Pure; the audit stage reads the files with the programs.
"""

from __future__ import annotations

import contextlib
import sqlite3
import struct
from collections.abc import Iterator, Sequence

from ecoready.domain.specs import ImageFile

# Where each database is, in the order looked for: the first found is the image's.
DATABASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dpkg", ("/var/lib/dpkg/status",)),
    ("apk", ("/lib/apk/db/installed",)),
    ("rpm", ("/var/lib/rpm/rpmdb.sqlite", "/usr/lib/sysimage/rpm/rpmdb.sqlite")),
)
MAX_DATABASE_BYTES = 64 << 20
MAX_PACKAGES = 20_000
RPMTAG_NAME, RPMTAG_VERSION, RPMTAG_RELEASE, RPMTAG_EPOCH = 1000, 1001, 1002, 1003
RPM_STRING, RPM_INT32 = 6, 4


def database_paths() -> list[list[str]]:
    """The choices to read, one group per database kind (`EngineImages.read_files`)."""
    return [list(paths) for _kind, paths in DATABASES]


def installed(files: Sequence[ImageFile | None]) -> tuple[str, dict[str, str]] | None:
    """(the database's kind, package -> version) from the files read for `database_paths()`;
    None when the image has none of them (or none could be read)."""
    for (kind, _paths), found in zip(DATABASES, files, strict=False):
        if found is None or found.note or not found.complete:
            continue
        data = bytes(found.data)
        packages = dpkg(data) if kind == "dpkg" else apk(data) if kind == "apk" else rpm_sqlite(data)
        if packages:
            return kind, packages
    return None


def _stanzas(text: str) -> Iterator[dict[str, str]]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                yield fields
            fields = {}
        elif not line[0].isspace() and ":" in line:
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
    if fields:
        yield fields


def dpkg(data: bytes) -> dict[str, str]:
    """dpkg's status file: every package whose status is `installed`, name -> version
    (a package installed for a second arch is `name:arch`)."""
    out: dict[str, str] = {}
    for fields in _stanzas(data.decode("utf-8", "replace")):
        name, version = fields.get("package", ""), fields.get("version", "")
        if not name or not fields.get("status", "").endswith(" installed"):
            continue
        key = name if name not in out else f"{name}:{fields.get('architecture', '')}"
        out[key] = version
        if len(out) >= MAX_PACKAGES:
            break
    return out


def apk(data: bytes) -> dict[str, str]:
    """apk's `installed` database: `P:` name and `V:` version per block."""
    out: dict[str, str] = {}
    name = version = ""
    for line in [*data.decode("utf-8", "replace").splitlines(), ""]:
        if not line.strip():
            if name:
                out[name] = version
            name = version = ""
            if len(out) >= MAX_PACKAGES:
                break
        elif line.startswith("P:"):
            name = line[2:].strip()
        elif line.startswith("V:"):
            version = line[2:].strip()
    return out


def rpm_sqlite(data: bytes) -> dict[str, str]:
    """rpm's sqlite database (RHEL 9, Oracle Linux 9, Fedora): each header's name and
    [epoch:]version-release. A database of another format (Berkeley DB) reads as empty."""
    if not data.startswith(b"SQLite format 3\0"):
        return {}
    out: dict[str, str] = {}
    connection = sqlite3.connect(":memory:")
    try:
        connection.deserialize(data)
        for (blob,) in connection.execute("SELECT blob FROM Packages LIMIT ?", (MAX_PACKAGES,)):
            tags = rpm_header(bytes(blob))
            name = tags.get(RPMTAG_NAME, "")
            if name:
                epoch = tags.get(RPMTAG_EPOCH, "")
                version = f"{tags.get(RPMTAG_VERSION, '')}-{tags.get(RPMTAG_RELEASE, '')}"
                out[name if name not in out else f"{name}#{len(out)}"] = f"{epoch}:{version}" if epoch else version
    except sqlite3.Error:
        return {}
    finally:
        with contextlib.suppress(sqlite3.Error):
            connection.close()
    return out


def rpm_header(blob: bytes) -> dict[int, str]:
    """The string and int32 tags of an rpm header as rpmdb keeps it (no lead, no magic:
    index count, data length, the index entries, the data)."""
    if len(blob) < 8:
        return {}
    count, length = struct.unpack_from(">II", blob, 0)
    data_at = 8 + 16 * count
    if count > 100_000 or data_at + length > len(blob):
        return {}
    out: dict[int, str] = {}
    for i in range(count):
        tag, kind, offset, _n = struct.unpack_from(">iiii", blob, 8 + 16 * i)
        if tag not in (RPMTAG_NAME, RPMTAG_VERSION, RPMTAG_RELEASE, RPMTAG_EPOCH) or not 0 <= offset < length:
            continue
        where = data_at + offset
        if kind == RPM_STRING:
            end = blob.find(b"\0", where)
            out[tag] = blob[where : end if end >= 0 else len(blob)].decode("utf-8", "replace")
        elif kind == RPM_INT32 and where + 4 <= len(blob):
            out[tag] = str(struct.unpack_from(">I", blob, where)[0])
    return out
