"""Unpacking a zipped submission: exactly one file, taken out of an archive that is treated as hostile."""

from __future__ import annotations

import io
import posixpath
import stat

from scorers.errors import InvalidSubmission, Problem

ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
#: Upper bounds for a zipped submission; the server passes its own, smaller ones.
DEFAULT_MAX_UNZIPPED_BYTES = 2 * 1024**3
DEFAULT_MAX_ZIP_ENTRIES = 64
#: Files that archivers add on their own and that are never the submission.
_ZIP_JUNK_PREFIXES = ("__MACOSX/",)
_ZIP_JUNK_NAMES = (".DS_Store", "Thumbs.db")


def is_zip(data: bytes) -> bool:
    return data[:4] in ZIP_MAGICS


def _unsafe_name(name: str) -> str | None:
    if not name:  # zipfile itself fails on it (is_dir reads the last character)
        return "an empty name"
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "an absolute or Windows path"
    if ".." in name.split("/"):
        return "a '..' path component"
    if "\x00" in name:
        return "a NUL character in its name"
    return None


def unpack_submission(
    data: bytes,
    *,
    max_bytes: int = DEFAULT_MAX_UNZIPPED_BYTES,
    max_entries: int = DEFAULT_MAX_ZIP_ENTRIES,
) -> tuple[bytes, str | None]:
    """Return the submission file's bytes and, for a zip archive, the name of the file inside.

    A zip must hold exactly one file (folders and the ``__MACOSX`` entries archivers add are
    ignored). Refused: more than ``max_entries`` entries, links, encrypted entries, names that
    leave the archive (absolute paths, ``..``), and content that decompresses past
    ``max_bytes`` (the declared size is checked first, then the real size while reading, so a
    lying header cannot inflate past the bound).
    """
    if not is_zip(data):
        return data, None
    # Imported for a zip only: most submissions are not zipped, and zipfile with its compressors is a good part of
    # what ``podium score`` would otherwise import.
    import lzma
    import zipfile
    import zlib

    def refuse(message: str) -> InvalidSubmission:
        return InvalidSubmission([Problem("zip archive", message)])

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, NotImplementedError) as exc:
        # NotImplementedError: an entry that declares a zip version newer than zipfile reads.
        raise refuse(f"cannot be read ({exc})") from None
    if len(infos) > max_entries:
        raise refuse(f"holds {len(infos)} entries; at most {max_entries} are accepted")
    files = []
    for info in infos:
        reason = _unsafe_name(info.filename)
        if reason:
            raise refuse(f"entry {info.filename!r} has {reason}")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise refuse(f"entry {info.filename!r} is a symbolic link")
        if info.is_dir() or info.filename.startswith(_ZIP_JUNK_PREFIXES):
            continue
        base = posixpath.basename(info.filename)
        if base in _ZIP_JUNK_NAMES or base.startswith("._"):
            continue
        files.append(info)
    if len(files) != 1:
        names = ", ".join(repr(i.filename) for i in files[:5])
        found = f"{len(files)} files" + (f" ({names})" if files else "")
        raise refuse(f"must hold exactly one submission file; it holds {found}")
    (info,) = files
    if info.flag_bits & 0x1:
        raise refuse(f"entry {info.filename!r} is encrypted")
    if info.file_size > max_bytes:
        raise refuse(f"entry {info.filename!r} unpacks to {info.file_size} bytes; the limit is {max_bytes}")
    out = bytearray()
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(1 << 20):
                out += chunk
                if len(out) > max_bytes:
                    raise refuse(f"entry {info.filename!r} unpacks to more than {max_bytes} bytes")
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as exc:
        # zlib and lzma raise their own errors on a damaged stream (bz2 raises OSError).
        raise refuse(f"entry {info.filename!r} cannot be unpacked ({exc})") from None
    except RuntimeError as exc:  # zipfile raises this for encrypted entries
        raise refuse(f"entry {info.filename!r} cannot be unpacked ({exc})") from None
    return bytes(out), info.filename
