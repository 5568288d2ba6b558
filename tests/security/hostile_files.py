"""Hostile upload files: zip archives that explode, lie, escape or hide links, and JSON that is deep,
long or absurd. Each builder is deterministic and returns the bytes a client would send."""

from __future__ import annotations

import io
import stat
import zipfile

MB = 1024 * 1024
#: Offsets in the zip format (APPNOTE 4.3.7 and 4.3.12): the version needed to extract, the
#: general purpose flags and the uncompressed size in a local file header and in a central directory header.
LOCAL, CENTRAL = b"PK\x03\x04", b"PK\x01\x02"
LOCAL_FLAGS, LOCAL_SIZE = 6, 22
CENTRAL_VERSION, CENTRAL_FLAGS, CENTRAL_SIZE = 6, 8, 24


def zipped(entries: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def zip_bomb(size: int, name: str = "submission.json") -> bytes:
    """One entry of ``size`` zero bytes, deflated (about 1000 to 1); written in pieces so that the
    test never holds the unpacked size in memory either."""
    buffer = io.BytesIO()
    piece = bytes(MB)
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open(name, "w") as entry,
    ):
        for _ in range(size // MB):
            entry.write(piece)
    return buffer.getvalue()


def patch_header(data: bytes, magic: bytes, offset: int, width: int, value: int) -> bytes:
    """``data`` with a little-endian field of the last header that starts with ``magic`` set to ``value``."""
    out = bytearray(data)
    at = out.rfind(magic)
    out[at + offset : at + offset + width] = value.to_bytes(width, "little")
    return bytes(out)


def lying_zip_bomb(size: int, declared: int) -> bytes:
    """A bomb whose headers declare ``declared`` bytes: only counting while inflating stops it."""
    bomb = zipped({"submission.json": bytes(size)})
    bomb = patch_header(bomb, CENTRAL, CENTRAL_SIZE, 4, declared)
    return patch_header(bomb, LOCAL, LOCAL_SIZE, 4, declared)


def encrypted_zip(data: bytes) -> bytes:
    """A zip whose one entry is flagged as encrypted (bit 0 of the flags)."""
    archive = zipped({"submission.json": data})
    archive = patch_header(archive, CENTRAL, CENTRAL_FLAGS, 2, 1)
    return patch_header(archive, LOCAL, LOCAL_FLAGS, 2, 1)


def symlink_zip(target: str = "/etc/passwd") -> bytes:
    """A zip whose one entry is a symbolic link (Unix mode in the external attributes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("submission.json")
        info.create_system = 3  # Unix, so that the mode bits mean what they say
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, target)
    return buffer.getvalue()


def file_and_folder_zip(file: str = "prediction", inside: str = "prediction/labels.txt") -> bytes:
    """A zip holding a file ``file`` and an entry ``inside`` that needs ``file`` to be a folder: it cannot be
    unpacked, in either order."""
    return zipped({file: b"cat\n", inside: b"dog\n"})


def many_entries_zip(count: int) -> bytes:
    return zipped({f"part-{i:05d}.json": b"{}" for i in range(count)}, zipfile.ZIP_STORED)


def nested_json(depth: int, opener: str = "[", closer: str = "]") -> bytes:
    return (opener * depth + closer * depth).encode()


def candidates_run(query: str, count: int) -> bytes:
    """An SV-Ident Task 2 run with ``count`` candidates for one query: valid JSON, absurd content."""
    candidates = ",".join(f'"{i}":0' for i in range(count))
    return f'{{"{query}": {{{candidates}}}}}'.encode()
