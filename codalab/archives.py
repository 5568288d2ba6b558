"""Unpacking the zips a CodaLab competition is made of (programs, reference data, result submissions).

Every archive is treated as hostile: no absolute names, no ``..``, no links, no devices; a bound on
the entries and on the bytes written (the declared sizes are not trusted). Executable bits stored in
the archive are kept, so that a program can name ``./run.sh``; nothing else of the stored modes is.
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path, PurePosixPath

#: Folder names that archiving tools add and that are never data.
JUNK_FOLDERS = ("__MACOSX",)


class ArchiveProblem(ValueError):
    """An archive that cannot be unpacked; the message says which entry and why (it names no content)."""


def is_zip(data: bytes) -> bool:
    return data[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def _member_path(into: Path, name: str) -> Path | None:
    """Where a member lands, or None for junk; raises for names that would leave ``into``."""
    pure = PurePosixPath(name)
    if name.startswith("/") or "\\" in name or "\x00" in name or ".." in pure.parts or ":" in name:
        raise ArchiveProblem(f"the archive entry {name[:200]!r} leaves its folder")
    parts = [p for p in pure.parts if p not in ("", ".")]
    if not parts or parts[0] in JUNK_FOLDERS or parts[-1] == ".DS_Store":
        return None
    return into.joinpath(*parts)


def unpack(data: bytes, into: Path, *, max_bytes: int, max_entries: int, what: str = "archive") -> int:
    """Unpack the zip ``data`` into the folder ``into``; returns the bytes written. Raises ``ArchiveProblem``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise ArchiveProblem(f"the {what} is not a readable zip archive ({exc})") from None
    if len(members) > max_entries:
        raise ArchiveProblem(f"the {what} holds {len(members)} entries; at most {max_entries} are accepted")
    into.mkdir(parents=True, exist_ok=True)
    written = 0
    for member in members:
        target = _member_path(into, member.filename)
        mode = member.external_attr >> 16
        if target is None:
            continue
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveProblem(f"the {what} entry {member.filename[:200]!r} is a link or a special file")
        if member.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(member) as source, target.open("wb") as sink:
                while chunk := source.read(1 << 20):
                    written += len(chunk)
                    if written > max_bytes:
                        raise ArchiveProblem(f"the {what} unpacks to more than {max_bytes} bytes")
                    sink.write(chunk)
        except (zipfile.BadZipFile, NotImplementedError, EOFError, RuntimeError, OSError) as exc:
            raise ArchiveProblem(f"the {what} entry {member.filename[:200]!r} cannot be unpacked ({exc})") from None
        if mode & 0o111:
            os.chmod(target, 0o755)  # noqa: S103 (a program's own executable, as it was packed)
    return written


def pack_folder(folder: Path, *, max_bytes: int) -> bytes:
    """A folder as zip bytes (names relative to it, sorted, so that equal folders give equal bytes)."""
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink():
                raise ArchiveProblem(f"{path.relative_to(folder)} is a link; a bundle folder holds plain files")
            relative = path.relative_to(folder).as_posix()
            if relative.split("/")[0] in JUNK_FOLDERS:
                continue
            info = zipfile.ZipInfo(relative + ("/" if path.is_dir() else ""), date_time=(1980, 1, 1, 0, 0, 0))
            executable = path.is_file() and path.stat().st_mode & 0o111
            info.external_attr = (0o40755 if path.is_dir() else 0o100755 if executable else 0o100644) << 16
            if path.is_dir():
                archive.writestr(info, b"")
                continue
            total += path.stat().st_size
            if total > max_bytes:
                raise ArchiveProblem(f"the folder {folder.name} holds more than {max_bytes} bytes")
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()
