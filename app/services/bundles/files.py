"""Finding and reading the files a bundle names, without ever leaving their base folder.

A bundle names files relative to one of two folders: ``path:`` the folder of the bundle's YAML file,
``data:`` the data folder given on the command line. A bundle may arrive from a person over the API,
so a name may not climb out of its folder: absolute paths, ``..`` and symbolic links that lead
outside are refused before anything is read. Who may not read the data folder at all (``data_refusal``)
gets one refusal for every ``data:`` entry, decided before the path is looked at, so that the answer
never tells whether a file exists there.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

#: Entry keys that name a file, and the folder each is relative to (as people call it).
FOLDER_NAMES = {"path": "bundle folder", "data": "data folder"}


class FileProblem(ValueError):
    """A file entry that cannot be read; the message says why, for the entry's key path."""


def check_file_name(name: str) -> str | None:
    """Why ``name`` cannot be shown as a download name, or None when it can."""
    if not name.strip() or len(name) > 255:
        return "expected a file name of 1 to 255 characters"
    if "/" in name or "\\" in name:
        return f"{name!r} holds a folder separator; give a plain file name"
    if name.startswith("."):
        return f"{name!r} starts with a dot; give a name that is not hidden"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return f"{name!r} holds a control character"
    return None


class FileFinder:
    """Resolves ``path:`` and ``data:`` entries to files inside their folder and reads each file once."""

    def __init__(self, bundle_dir: Path, data_dir: Path | None, *, data_refusal: str | None = None) -> None:
        self.folders: dict[str, Path | None] = {"path": bundle_dir, "data": data_dir}
        #: Why ``data:`` entries are refused whatever they name (the sender may not read the data folder).
        self.data_refusal = data_refusal
        self._cache: dict[Path, bytes] = {}

    def find(self, key: str, relative: str) -> Path:
        """The real path of the file ``relative`` names under the folder of ``key``; raises ``FileProblem``."""
        real = self._resolve(key, relative)
        if not real.is_file():
            raise FileProblem(f"{relative} is not a file")
        return real

    def folder(self, relative: str) -> list[tuple[str, bytes]]:
        """Each file under the bundle's folder ``relative`` with its path inside that folder, in order; raises
        ``FileProblem`` for what is not a folder of the bundle, holds no file or links outside the bundle."""
        real = self._resolve("path", relative)
        if not real.is_dir():
            raise FileProblem(f"{relative} is not a folder")
        out = []
        for inner in sorted(path.relative_to(real).as_posix() for path in real.rglob("*") if not path.is_dir()):
            out.append((inner, self.read(self.find("path", f"{relative.rstrip('/')}/{inner}"))))
        if not out:
            raise FileProblem(f"the folder {relative} holds no file")
        return out

    def _resolve(self, key: str, relative: str) -> Path:
        """The real path ``relative`` names under the folder of ``key``, checked to stay inside it."""
        folder_name = FOLDER_NAMES[key]
        if key == "data" and self.data_refusal is not None:
            raise FileProblem(self.data_refusal)
        pure = PurePosixPath(relative)
        if not relative.strip():
            raise FileProblem(f"expected a file path after {key}:")
        if "\\" in relative or "\x00" in relative or pure.is_absolute() or ".." in pure.parts:
            raise FileProblem(f"{relative}: give a path inside the {folder_name}, with '/', no '..' and no leading '/'")
        base = self.folders[key]
        if base is None:
            raise FileProblem(f"{relative} is named with data:, but no data folder was given (--data-dir)")
        if not base.is_dir():
            raise FileProblem(f"the {folder_name} {base} does not exist")
        try:
            real = (base / pure).resolve(strict=True)
        except FileNotFoundError:
            raise FileProblem(f"file not found: {relative}") from None
        except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of symbolic links
            raise FileProblem(f"{relative} cannot be opened ({exc})") from None
        if not real.is_relative_to(base.resolve()):
            raise FileProblem(f"{relative} is a symbolic link that leads outside the {folder_name}")
        return real

    def read(self, real: Path) -> bytes:
        """The bytes of a file ``find`` returned; a file named twice is read once."""
        if real not in self._cache:
            try:
                self._cache[real] = real.read_bytes()
            except OSError as exc:
                raise FileProblem(f"cannot read {real.name}: {exc.strerror or exc}") from None
        return self._cache[real]
