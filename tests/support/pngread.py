"""A minimal PNG reader for screenshot tests (8-bit RGB/RGBA, not interlaced: what
Chromium writes), so the tests need no imaging library."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path: Path) -> tuple[int, int, list[bytes], int]:
    """(width, height, unfiltered rows, bytes per pixel)."""
    data = path.read_bytes()
    assert data[:8] == SIGNATURE, f"{path} is not a PNG"
    pos, idat = 8, b""
    width = height = depth = colour = interlace = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, chunk = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    i = 0
    for _ in range(height):
        kind_byte, line = raw[i], bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        if kind_byte == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 0xFF
        elif kind_byte == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 0xFF
        elif kind_byte == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + (left + prev[x]) // 2) & 0xFF
        elif kind_byte == 4:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                up_left = prev[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + _paeth(left, prev[x], up_left)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def colour_counts(path: Path) -> tuple[int, int, Counter[str]]:
    """(width, height, {'#rrggbb': pixels})."""
    width, height, rows, bpp = read_png(path)
    counts: Counter[str] = Counter()
    for row in rows:
        for x in range(0, len(row), bpp):
            counts[f"#{row[x]:02x}{row[x + 1]:02x}{row[x + 2]:02x}"] += 1
    return width, height, counts
