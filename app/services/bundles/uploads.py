"""Competition bundles sent over the API or named as a zip: a zip archive of the bundle folder, or the YAML file alone.

The archive is unpacked into a temporary folder by ``codalab.archives.unpack``, the one unpacker of
untrusted archives (no absolute paths, no ``..``, no links, bounded size and entry count), then read
by ``read_bundle`` like a bundle on disk: a Podium bundle, or a CodaLab or Codabench one. A lone YAML
file can name files only under the server's data folder (``{data: ...}``) or derive them from the gold.

The data folder holds every competition's files, hidden gold included, so only site admins may name
files in it (``may_read_data``); anyone else's ``data:`` entries are refused, one message for every
path, so that the refusal does not tell whether the file exists. They send the files in the archive.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from app.services.bundles.codalab_bundles import LoadedBundle, read_bundle
from app.services.bundles.loader import BUNDLE_FILE
from app.services.bundles.spec import BundleError, CompetitionSpec
from codalab.archives import ArchiveProblem, is_zip, unpack

MAX_ENTRIES = 10_000


def _refuse(message: str) -> BundleError:
    return BundleError([("", message)])


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


def bundle_from_upload(data: bytes, *, data_dir: Path | None, max_bytes: int, may_read_data: bool) -> LoadedBundle:
    """Read an uploaded bundle (zip archive or YAML text); raises ``BundleError`` naming each mistake.
    ``data:`` entries are read from ``data_dir`` only when ``may_read_data`` (a site admin sent it)."""
    refusal = None if may_read_data else DATA_REFUSED
    with tempfile.TemporaryDirectory(prefix="podium-bundle-") as tmp:
        root = Path(tmp)
        if is_zip(data):
            try:
                unpack(data, root, max_bytes=max_bytes, max_entries=MAX_ENTRIES, what="bundle archive")
            except ArchiveProblem as exc:
                raise _refuse(str(exc)) from None
            return read_bundle(_bundle_file(root), data_dir, data_refusal=refusal)
        file = root / BUNDLE_FILE
        file.write_bytes(data)
        return read_bundle(file, data_dir, data_refusal=refusal)


def spec_from_upload(data: bytes, *, data_dir: Path | None, max_bytes: int, may_read_data: bool) -> CompetitionSpec:
    """``bundle_from_upload``'s spec alone."""
    return bundle_from_upload(data, data_dir=data_dir, max_bytes=max_bytes, may_read_data=may_read_data).spec
