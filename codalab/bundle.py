"""CodaLab v1.5 and Codabench v2 bundles, translated into Podium's own bundle format.

``translate(folder)`` reads the ``competition.yaml`` of an unpacked CodaLab or Codabench bundle and
returns a ``Translation``: the same competition as a Podium bundle document (the mapping that
Podium's bundle loader reads, with file entries relative to ``folder``), the warnings that list what
could not be mapped, and the problems that make the bundle unusable, each under its CodaLab key path.
The mapping is documented in examples/README.md ("CodaLab and Codabench bundles"); the two formats
are read by ``codalab.bundle_v15`` and ``codalab.bundle_v2``.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import unicodedata
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path, PurePosixPath
from typing import Any

import nh3
import yaml

from codalab.archives import ArchiveProblem, is_zip, pack_folder, unpack
from codalab.bounded_yaml import load_bounded
from codalab.program import ProgramProblem, program_root, read_command
from codalab.sources import compile_warnings

BUNDLE_FILE = "competition.yaml"
MAX_YAML_BYTES = 1024 * 1024
#: The largest program, data folder or page read while translating.
MAX_FILE_BYTES = 2 * 1024**3
MAX_PAGE_BYTES = 1024 * 1024
#: The time limit of a phase that names none (seconds), as Codabench's default.
DEFAULT_TIME_LIMIT = 600
#: Codabench's images when a bundle names none.
DEFAULT_IMAGE = {"codalab-1.5": "codalab/codalab-legacy:py37", "codabench-2": "codalab/codalab-legacy:py3"}
_DATE_FORMATS = ("%m-%d-%Y", "%m/%d/%Y", "%Y-%m-%d", "%m-%d-%Y %H:%M", "%Y-%m-%d %H:%M", "%m/%d/%Y %H:%M")


#: The folder (or zip) of a CodaLab starting kit that shows what a result submission holds.
SAMPLE_RESULT = "sample_result_submission"


class CodalabError(ValueError):
    """A file that is not a CodaLab or Codabench bundle at all."""


@dataclass
class Translation:
    """A Podium bundle document made from a CodaLab or Codabench bundle, with what did not carry over."""

    kind: str
    document: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)


def detect(document: Any) -> str | None:
    """``codabench-2``, ``codalab-1.5``, or None for a document that is neither (Podium's own format)."""
    if not isinstance(document, dict):
        return None
    if str(document.get("version", "")).strip() in ("2", "2.0") and "tasks" in document:
        return "codabench-2"
    if isinstance(document.get("phases"), dict) or isinstance(document.get("leaderboard"), dict):
        return "codalab-1.5"
    return None


def read_yaml(file: Path) -> Any:
    """The bundle's YAML as plain data. Aliases are allowed here (CodaLab bundles use them for leaderboards)."""
    data = file.read_bytes()
    if len(data) > MAX_YAML_BYTES:
        raise CodalabError(f"{file.name} is {len(data)} bytes; at most {MAX_YAML_BYTES} are accepted")
    try:
        return load_bounded(data.decode("utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CodalabError(f"{file.name} is not valid YAML ({exc})") from None


def translate(folder: Path, document: Any | None = None) -> Translation:
    """The Podium bundle for the CodaLab or Codabench bundle unpacked in ``folder``."""
    document = read_yaml(folder / BUNDLE_FILE) if document is None else document
    kind = detect(document)
    if kind == "codabench-2":
        from codalab.bundle_v2 import V2Reader

        return V2Reader(folder, document).translate()
    if kind == "codalab-1.5":
        from codalab.bundle_v15 import V15Reader

        return V15Reader(folder, document).translate()
    raise CodalabError("this is neither a CodaLab v1.5 nor a Codabench v2 competition.yaml")


def text_of(value: Any, fallback: str) -> str:
    """``value`` when it is non-blank text, else ``fallback``."""
    return value.strip() if isinstance(value, str) and value.strip() else fallback


def slugify(text: str, fallback: str) -> str:
    """A Podium slug from a title: ASCII lowercase letters, digits and inner hyphens, at most 64."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:64].strip("-")
    return slug or fallback


class Reader:
    """What both formats share: problems and warnings, files, times, pages, programs and metrics."""

    kind: str

    def __init__(self, folder: Path, document: dict[str, Any]) -> None:
        self.folder = folder.resolve()
        self.yaml = document
        self.problems: list[tuple[str, str]] = []
        self.warnings: list[str] = []
        self._hashes: dict[Path, set[str]] = {}

    def problem(self, key: str, message: str) -> None:
        self.problems.append((key, message))

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def unmapped(self, where: str, mapping: dict[str, Any], known: Iterable[str]) -> None:
        """A warning naming every key of ``mapping`` that the translation does not use."""
        left = sorted(str(key) for key in mapping if key not in set(known))
        if left:
            place = f"{where}: " if where else ""
            self.warn(f"{place}not imported (Podium has no equivalent): {', '.join(left)}")

    def result(self, document: dict[str, Any]) -> Translation:
        return Translation(self.kind, document, self.warnings, self.problems)

    # -- files ----------------------------------------------------------------------------------------
    def path(self, value: Any, key: str) -> Path | None:
        """The file or folder a bundle value names, inside the bundle; records a problem when there is none."""
        if not isinstance(value, str) or not value.strip():
            self.problem(key, f"expected a file or folder of the bundle, found {value!r}")
            return None
        relative = value.strip().rstrip("/")
        pure = PurePosixPath(relative)
        if "\\" in relative or pure.is_absolute() or ".." in pure.parts:
            self.problem(key, f"{value!r} is not a path inside the bundle")
            return None
        candidate = self.folder / pure
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            hint = (
                " (a Codabench dataset key? include the files in the bundle instead)" if _looks_like_key(value) else ""
            )
            self.problem(key, f"{value!r} is not in the bundle{hint}")
            return None
        if not real.is_relative_to(self.folder):
            self.problem(key, f"{value!r} leads outside the bundle")
            return None
        return real

    def entry(self, path: Path) -> dict[str, Any]:
        """A Podium file entry for ``path`` (a folder is offered as ``<name>.zip``)."""
        relative = path.relative_to(self.folder).as_posix()
        return {"path": relative, "name": f"{path.name}.zip"} if path.is_dir() else {"path": relative}

    def content_hashes(self, path: Path) -> set[str]:
        """sha256 of every file in a folder or zip (or of the file itself), to spot published gold."""
        if path not in self._hashes:
            hashes: set[str] = set()
            try:
                with tempfile.TemporaryDirectory(prefix="podium-codalab-") as tmp:
                    root = self._unpacked(path, Path(tmp))
                    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
                    hashes = {hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
            except (ArchiveProblem, OSError):
                hashes = set()
            self._hashes[path] = hashes
        return self._hashes[path]

    def _unpacked(self, path: Path, into: Path) -> Path:
        if path.is_dir():
            return path
        data = path.read_bytes()
        if not is_zip(data):
            return path
        unpack(data, into, max_bytes=MAX_FILE_BYTES, max_entries=100_000)
        return into

    def public(self, value: Any, key: str, secret: list[Path]) -> dict[str, Any] | None:
        """A public file entry, unless it would publish the reference data (then a warning instead)."""
        path = self.path(value, key)
        if path is None:
            return None
        if path in secret or any(self.content_hashes(path) == self.content_hashes(s) for s in secret):
            self.warn(
                f"{key}: {value} is the same as the reference data, so it is not published "
                "(participants would get the answers)"
            )
            return None
        shared = set().union(*(self.content_hashes(s) for s in secret)) & self.content_hashes(path) if secret else set()
        if shared:
            self.warn(
                f"{key}: {value} holds {len(shared)} file(s) identical to files of the reference data; "
                "it is published: check that it gives no answers away"
            )
        return self.entry(path)

    def sample_results(self, kit: Path) -> list[str]:
        """The files of a starting kit's sample result submission (a ``sample_result_submission`` folder or zip
        in the kit): the names a result zip holds at its top, public as the kit is. None found: ``[]``."""
        try:
            with tempfile.TemporaryDirectory(prefix="podium-codalab-") as tmp:
                root = self._unpacked(kit, Path(tmp) / "kit")
                found = sorted(root.rglob(f"{SAMPLE_RESULT}*")) if root.is_dir() else []
                for sample in found:
                    if sample.is_dir():
                        names = [p.relative_to(sample).as_posix() for p in sample.rglob("*") if p.is_file()]
                    elif sample.name == f"{SAMPLE_RESULT}.zip":
                        with zipfile.ZipFile(sample) as archive:
                            names = [n.removeprefix("./") for n in archive.namelist() if not n.endswith("/")]
                    else:
                        continue
                    names = sorted(n for n in names if not n.startswith("__MACOSX/") and n != ".DS_Store")
                    if names:
                        return names
        except (ArchiveProblem, OSError, zipfile.BadZipFile):
            return []
        return []

    def program(self, value: Any, key: str, what: str = "scoring program") -> dict[str, Any] | None:
        """The scoring (or ingestion) program's entry, after checking its metadata names a command."""
        path = self.path(value, key)
        if path is None:
            return None
        zipped = path.with_name(path.name + ".zip")
        if path.is_dir() and zipped.is_file():
            self.warn(
                f"{key}: the bundle holds both the folder {value} and {zipped.name}; the folder is used, as named"
            )
        try:
            with tempfile.TemporaryDirectory(prefix="podium-codalab-") as tmp:
                data = pack_folder(path, max_bytes=MAX_FILE_BYTES) if path.is_dir() else path.read_bytes()
                unpack(data, Path(tmp), max_bytes=MAX_FILE_BYTES, max_entries=100_000, what=what)
                root = program_root(Path(tmp))
                read_command(root)
                for warning in compile_warnings(root, f"{value}".rstrip("/")):
                    self.warn(f"{key}: {warning}")
        except (ArchiveProblem, ProgramProblem, OSError) as exc:
            self.problem(key, str(exc).replace("scoring program", what))
            return None
        return self.entry(path)

    # -- text -----------------------------------------------------------------------------------------
    def page(self, value: Any, key: str, title: str) -> str | None:
        """A page (HTML or Markdown file) as a Markdown section, HTML sanitized and converted."""
        path = self.path(value, key)
        if path is None or not path.is_file():
            if path is not None:
                self.problem(key, f"{value!r} is a folder, not a page")
            return None
        text = path.read_bytes()[:MAX_PAGE_BYTES].decode("utf-8", "replace")
        if path.suffix.lower() in (".html", ".htm") or re.search(r"<(p|div|h[1-6]|br|ul|table)\b", text, re.I):
            import markdownify  # imported where used: it loads BeautifulSoup, which servers never need at start

            text = markdownify.markdownify(nh3.clean(text), heading_style="ATX").strip()
        return f"## {title}\n\n{text.strip()}" if text.strip() else None

    def time(self, value: Any, key: str) -> str | None:
        """A bundle date as Podium's ISO UTC minute (``2019-08-07T00:00Z``); both bundle styles are read."""
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "none")):
            return None
        moment = _parse_time(value)
        if moment is None:
            self.problem(key, f"{value!r} is not a date (expected e.g. 2019-08-07, 8-7-2019 or ISO 8601)")
            return None
        if moment.second or moment.microsecond:
            self.warn(f"{key}: {value} is rounded down to the minute")
        return moment.replace(second=0, microsecond=0).strftime("%Y-%m-%dT%H:%MZ")

    def limit(self, value: Any, key: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(key, f"expected a whole number, found {value!r}")
            return None
        if value < 1:
            self.warn(f"{key}: {value} means no limit in Podium")
            return None
        return value

    def metric(self, key: Any, title: Any, sorting: Any, decimals: Any, where: str) -> dict[str, Any] | None:
        """A leaderboard column as a metric of the program scorer."""
        if not isinstance(key, str) or not key.strip():
            self.problem(where, f"a column needs a key, found {key!r}")
            return None
        order = str(sorting or "desc").strip().lower()
        if order not in ("asc", "desc"):
            self.problem(where, f"sorting must be asc or desc, found {sorting!r}")
            order = "desc"
        out: dict[str, Any] = {"key": key, "title": str(title or key), "higher_is_better": order == "desc"}
        if isinstance(decimals, int) and not isinstance(decimals, bool) and 0 <= decimals <= 12:
            out["decimals"] = decimals
        elif decimals is not None:
            self.warn(f"{where}: the number format {decimals!r} is not a count of decimals and is ignored")
        return out


def _looks_like_key(value: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value.strip(), re.I))


def _parse_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time())
    elif isinstance(value, str):
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            for pattern in _DATE_FORMATS:
                try:
                    moment = datetime.strptime(text, pattern)
                    break
                except ValueError:
                    continue
            else:
                return None
    else:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def unique_names(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Public entries with distinct download names (the same file named twice is offered once)."""
    seen: dict[str, dict[str, Any]] = {}
    for entry in entries:
        name = entry.get("name") or entry["path"].rsplit("/", 1)[-1]
        if name in seen and seen[name]["path"] == entry["path"]:
            continue
        while name in seen:
            name = f"{len(seen)}-{name}"
        seen[name] = {**entry, "name": name}
    return list(seen.values())
