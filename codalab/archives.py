"""Unpacking the zips a CodaLab competition is made of (programs, reference data, result submissions).

Every archive is treated as hostile: no absolute names, no ``..``, no links, no devices, no names a
file system refuses (too long), no file that another entry needs as a folder (``_Layout``); a bound on
the entries and on the bytes written (the declared sizes are not trusted). ``check`` refuses what
``unpack`` would fail on, so that an archive accepted at upload unpacks later. Executable bits stored
in the archive are kept, so that a program can name ``./run.sh``; nothing else of the stored modes is.
"""

from __future__ import annotations

import io
import lzma
import os
import stat
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any, BinaryIO

#: A zip as bytes, a file's path, or a seekable stream (so that a large one is read entry by entry, never whole).
Zip = bytes | Path | BinaryIO

#: Folder names that archiving tools add and that are never data.
JUNK_FOLDERS = ("__MACOSX",)
#: What Linux file systems take: a name of at most 255 bytes (NAME_MAX), a path of at most 4096 (PATH_MAX),
#: of which an entry's name may take 3072, leaving room for the folder it is unpacked into.
MAX_PART_BYTES = 255
MAX_NAME_BYTES = 3072


class ArchiveProblem(ValueError):
    """An archive that cannot be unpacked; the message says which entry and why (it names no content)."""


def is_zip(data: bytes) -> bool:
    return data[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def _member_path(into: Path, name: str, what: str) -> Path | None:
    """Where a member lands, or None for junk; raises for names that would leave ``into``."""
    pure = PurePosixPath(name)
    if name.startswith("/") or "\\" in name or "\x00" in name or ".." in pure.parts or ":" in name:
        raise ArchiveProblem(f"the {what} entry {name[:200]!r} leaves its folder")
    parts = [p for p in pure.parts if p not in ("", ".")]
    if not parts or parts[0] in JUNK_FOLDERS or parts[-1] == ".DS_Store":
        return None
    if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES or any(
        len(part.encode("utf-8", "surrogateescape")) > MAX_PART_BYTES for part in parts
    ):
        raise ArchiveProblem(
            f"the {what} entry {name[:200]!r} has a name too long to unpack (at most {MAX_PART_BYTES} bytes"
            f" a folder or file name, {MAX_NAME_BYTES} bytes in all)"
        )
    return into.joinpath(*parts)


class _Layout:
    """The paths an archive's entries land on, to refuse two entries that cannot both be unpacked.

    Refused: a file on a path that another entry needs as a folder (a file ``a`` beside a file ``a/b`` or
    a folder entry ``a/``, in either order), which no unpacking can honour. Kept: two files on the same
    path (a name stored twice, as zip tools that append do, or ``a`` and ``./a``): the later one is
    unpacked over the earlier, the one ``zipfile`` reads by that name (CodaLab bundles in use hold such
    repeats). Names that differ only in case are different files on the Linux file systems archives are
    unpacked on. Written by hand because
    ``zipfile`` checks none of this; the paths are kept as a tree of numbered folders (a dict from
    (folder, name) to a number), so that each entry costs the length of its name, however deep it is.
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.nodes: dict[tuple[int, str], int] = {}
        self.files: dict[int, str] = {}  # a path holding a file -> the entry that put it there
        self.folders: dict[int, str] = {}  # a path that is a folder -> the first entry that needs it as one

    def add(self, name: str, parts: tuple[str, ...], is_dir: bool) -> None:
        node = 0
        for depth, part in enumerate(parts):
            node = self.nodes.setdefault((node, part), len(self.nodes) + 1)
            if depth == len(parts) - 1 and not is_dir:
                break
            if node in self.files:
                self._refuse(self.files[node], name)
            self.folders.setdefault(node, name)
        else:
            return
        if node in self.folders:
            self._refuse(name, self.folders[node])
        self.files[node] = name

    def _refuse(self, file: str, other: str) -> None:
        raise ArchiveProblem(
            f"the {self.what} entries {file[:200]!r} and {other[:200]!r} cannot both be unpacked:"
            f" {file[:200]!r} is a file, and {other[:200]!r} needs it to be a folder"
        )


def _members(data: Zip, into: Path, max_entries: int, what: str) -> Iterator[tuple[zipfile.ZipFile, Any, Path]]:
    """The archive's members that are data, with where each lands; raises for anything unsafe."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, NotImplementedError) as exc:
        raise ArchiveProblem(f"the {what} is not a readable zip archive ({exc})") from None
    if len(members) > max_entries:
        raise ArchiveProblem(f"the {what} holds {len(members)} entries; at most {max_entries} are accepted")
    layout, data_members = _Layout(what), []
    for member in members:  # every entry is checked before anything is written
        target = _member_path(into, member.filename, what)
        if target is None:
            continue
        if stat.S_IFMT(member.external_attr >> 16) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveProblem(f"the {what} entry {member.filename[:200]!r} is a link or a special file")
        layout.add(member.filename, target.relative_to(into).parts, member.is_dir())
        data_members.append((member, target))
    with archive:  # closes the file it opened for a path (a stream passed in stays open)
        for member, target in data_members:
            yield archive, member, target


def _copy(archive: zipfile.ZipFile, member: Any, sink: IO[bytes] | None, budget: int, what: str) -> int:
    """Decompress one member into ``sink`` (or nowhere), at most ``budget`` bytes; returns how many it held."""
    written = 0
    try:
        with archive.open(member) as source:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                if written > budget:
                    raise ArchiveProblem(f"the {what} unpacks to more than the bytes allowed")
                if sink is not None:
                    sink.write(chunk)
    except ArchiveProblem:
        raise
    # Damaged data: zlib.error (deflate), LZMAError, and the OSError or ValueError of bzip2 and zipfile.
    except (
        zipfile.BadZipFile,
        NotImplementedError,
        EOFError,
        RuntimeError,
        OSError,
        ValueError,
        zlib.error,
        lzma.LZMAError,
    ) as exc:
        raise ArchiveProblem(f"the {what} entry {member.filename[:200]!r} cannot be unpacked ({exc})") from None
    return written


def check(data: Zip, *, max_bytes: int, max_entries: int, what: str = "archive") -> int:
    """What ``unpack`` checks, without writing anything; returns the bytes it would write."""
    total = 0
    for archive, member, _ in _members(data, Path("/"), max_entries, what):
        if not member.is_dir():
            try:
                total += _copy(archive, member, None, max_bytes - total, what)
            except ArchiveProblem as exc:
                raise _too_large(exc, what, max_bytes) from None
    return total


def _too_large(exc: ArchiveProblem, what: str, max_bytes: int) -> ArchiveProblem:
    if "bytes allowed" in str(exc):
        return ArchiveProblem(f"the {what} unpacks to more than {max_bytes} bytes")
    return exc


def unpack(data: Zip, into: Path, *, max_bytes: int, max_entries: int, what: str = "archive") -> int:
    """Unpack the zip ``data`` (bytes, a path or a seekable stream) into the folder ``into``; returns the bytes
    written. Raises ``ArchiveProblem``."""
    into.mkdir(parents=True, exist_ok=True)
    written = 0
    for archive, member, target in _members(data, into, max_entries, what):
        if member.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as sink:
            try:
                written += _copy(archive, member, sink, max_bytes - written, what)
            except ArchiveProblem as exc:
                raise _too_large(exc, what, max_bytes) from None
        if (member.external_attr >> 16) & 0o111:
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
