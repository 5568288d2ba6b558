"""Competition bundles sent over the API: a zip archive of the bundle folder, or the YAML file alone.

The archive is unpacked into a temporary folder with the same care as a zipped submission (no
absolute paths, no ``..``, no links, bounded size and entry count), then read by ``load_bundle``
like a bundle on disk. A lone YAML file can name files only under the server's data folder
(``{data: ...}``) or derive them from the gold.

The data folder holds every competition's files, hidden gold included, so only site admins may name
files in it (``may_read_data``); anyone else's ``data:`` entries are refused, one message for every
path, so that the refusal does not tell whether the file exists. They send the files in the archive.
"""

from __future__ import annotations

import io
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from app.services.bundles.loader import BUNDLE_FILE, load_bundle
from app.services.bundles.spec import BundleError, CompetitionSpec

MAX_ENTRIES = 10_000


def _refuse(message: str) -> BundleError:
    return BundleError([("", message)])


def _extract(data: bytes, into: Path, max_bytes: int) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise _refuse(f"the bundle archive cannot be read ({exc})") from None
    if len(infos) > MAX_ENTRIES:
        raise _refuse(f"the bundle archive holds {len(infos)} entries; at most {MAX_ENTRIES} are accepted")
    if sum(info.file_size for info in infos) > max_bytes:
        raise _refuse(f"the bundle archive unpacks to more than {max_bytes} bytes")
    written = 0
    for info in infos:
        name = PurePosixPath(info.filename)
        if info.filename.startswith("/") or "\\" in info.filename or ".." in name.parts or ":" in info.filename:
            raise _refuse(f"the bundle archive entry {info.filename!r} leaves the bundle folder")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise _refuse(f"the bundle archive entry {info.filename!r} is a link")
        target = into.joinpath(*name.parts)
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(info) as source, target.open("wb") as sink:
                while chunk := source.read(1 << 20):
                    written += len(chunk)
                    if written > max_bytes:  # the declared sizes lied
                        raise _refuse(f"the bundle archive unpacks to more than {max_bytes} bytes")
                    sink.write(chunk)
        except (zipfile.BadZipFile, NotImplementedError, EOFError, RuntimeError, OSError) as exc:
            raise _refuse(f"the bundle archive entry {info.filename!r} cannot be unpacked ({exc})") from None


def _bundle_file(root: Path) -> Path:
    """``competition.yaml`` at the top of the archive, or inside its single top-level folder."""
    if (root / BUNDLE_FILE).is_file():
        return root / BUNDLE_FILE
    entries = [p for p in root.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / BUNDLE_FILE).is_file():
        return entries[0] / BUNDLE_FILE
    raise _refuse(f"the bundle archive has no {BUNDLE_FILE} at its top (or in its one top-level folder)")


#: Why a ``data:`` entry of someone who may not read the data folder is refused (whatever it names).
DATA_REFUSED = (
    "data: names a file in the server's data folder, which only site admins may do; "
    "put the file in the bundle archive and name it with path:"
)


def spec_from_upload(data: bytes, *, data_dir: Path | None, max_bytes: int, may_read_data: bool) -> CompetitionSpec:
    """Read an uploaded bundle (zip archive or YAML text); raises ``BundleError`` naming each mistake.
    ``data:`` entries are read from ``data_dir`` only when ``may_read_data`` (a site admin sent it)."""
    refusal = None if may_read_data else DATA_REFUSED
    with tempfile.TemporaryDirectory(prefix="podium-bundle-") as tmp:
        root = Path(tmp)
        if data[:4] == b"PK\x03\x04":
            _extract(data, root, max_bytes)
            return load_bundle(_bundle_file(root), data_dir, data_refusal=refusal)
        file = root / BUNDLE_FILE
        file.write_bytes(data)
        return load_bundle(file, data_dir, data_refusal=refusal)
