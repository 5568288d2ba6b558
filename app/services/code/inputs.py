"""A code phase's inputs as one zip (stored once, unpacked into each run's /input); its starting kit is zipped
the same way."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Sequence

from app.services.bundles.spec import BundleFile

#: A fixed time in every entry, so that the same inputs always make the same zip (and the same blob).
ENTRY_TIME = (2000, 1, 1, 0, 0, 0)


def inputs_zip(files: Sequence[BundleFile], name: str = "inputs.zip") -> BundleFile:
    """The files zipped under their names, in a stable order, as the file ``name``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(files, key=lambda f: f.name):
            archive.writestr(zipfile.ZipInfo(file.name, ENTRY_TIME), file.data, zipfile.ZIP_DEFLATED)
    data = buffer.getvalue()
    return BundleFile(name, data, hashlib.sha256(data).hexdigest())
