"""CodaLab v1.5 and Codabench v2 bundles, read wherever a Podium bundle is read.

``read_bundle`` looks at a bundle's ``competition.yaml``: a CodaLab or Codabench document is
translated by ``codalab.bundle`` (the mapping is in examples/README.md), its files staged as a Podium
bundle (folders zipped; each phase's gold made of its scoring program and reference data, which the
``program`` scorer reads) and loaded by ``load_bundle`` like any other, so that every check of
a Podium bundle holds for it too. Anything else is a Podium bundle. What the translation could not
map comes back as warnings, for the API's answer and the command's output.
"""

from __future__ import annotations

import io
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from app.services.bundles.loader import BUNDLE_FILE, load_bundle
from app.services.bundles.spec import BundleError, CompetitionSpec
from codalab.archives import ArchiveProblem, is_zip, pack_folder
from codalab.bundle import DEFAULT_TIME_LIMIT, MAX_FILE_BYTES, CodalabError, detect, read_yaml, translate
from scorers.generic.program import pack_gold

#: The key under which the staged bundle keeps its files.
STAGED = "files"


@dataclass(frozen=True)
class LoadedBundle:
    """A checked bundle: the spec, its format (``podium``, ``codalab-1.5``, ``codabench-2``) and warnings."""

    spec: CompetitionSpec
    format: str = "podium"
    #: ``(key path, message)``: what the translation could not map, then what loads but is probably a mistake
    #: (the spec's own warnings); the key is empty for the bundle as a whole.
    warnings: tuple[tuple[str, str], ...] = ()


def read_bundle(path: Path, data_dir: Path | None = None, *, data_refusal: str | None = None) -> LoadedBundle:
    """The bundle at ``path`` (its YAML file or its folder), whichever of the three formats it is in.
    Raises ``BundleError`` listing every problem."""
    file = path / BUNDLE_FILE if path.is_dir() else path
    try:
        document = read_yaml(file)
    except (CodalabError, OSError):
        document = None  # not readable as plain YAML: the Podium loader says why
    if detect(document) is None:
        spec = load_bundle(path, data_dir, data_refusal=data_refusal)
        return LoadedBundle(spec, warnings=tuple(spec.warnings))
    return import_codalab(file.parent, document)


def import_codalab(folder: Path, document: Any) -> LoadedBundle:
    """A CodaLab or Codabench bundle unpacked in ``folder`` as a Podium competition."""
    try:
        translation = translate(folder, document)
    except CodalabError as exc:
        raise BundleError([("", str(exc))]) from None
    if translation.problems:
        raise BundleError(translation.problems)
    with tempfile.TemporaryDirectory(prefix="podium-codalab-") as tmp:
        try:
            staged = _Stage(folder.resolve(), Path(tmp)).bundle(translation.document)
        except (ArchiveProblem, OSError) as exc:
            raise BundleError([("", f"the bundle's files cannot be read: {exc}")]) from None
        spec = load_bundle(staged)
    return LoadedBundle(spec, translation.kind, (*map(_located, translation.warnings), *spec.warnings))


def _located(warning: str) -> tuple[str, str]:
    """A translation's warning as (key path, message): its text starts with the CodaLab key path, if any."""
    found = re.match(r"([\w.\[\]-]+): (.+)", warning, re.S)
    return (found.group(1), found.group(2)) if found else ("", warning)


class _Stage:
    """Writes the translated document and its files as a Podium bundle folder."""

    def __init__(self, source: Path, into: Path) -> None:
        self.source = source
        self.into = into
        self.count = 0
        self._zips: dict[Path, bytes] = {}

    def bundle(self, document: dict[str, Any]) -> Path:
        (self.into / STAGED).mkdir()
        for task in document.get("tasks", []):
            image = (task.get("scorer_options") or {}).get("image")
            for phase in task.get("phases", []):
                self.phase(phase, image if isinstance(image, str) else None)
        file = self.into / BUNDLE_FILE
        text = yaml.dump(document, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True)
        file.write_text(text, encoding="utf-8")
        return file

    def phase(self, phase: dict[str, Any], image: str | None) -> None:
        program = self.zipped(phase.pop("program"))
        reference = self.zipped(phase["gold"])
        phase["gold"] = self.write("gold.zip", pack_gold(program, reference))
        phase["execution_time_limit"] = phase.pop("time_limit", None)
        # A program scores a submission as a whole: there are no units to resample for an interval.
        phase["intervals"] = False
        ingestion, data = phase.pop("ingestion_program", None), phase.pop("input_data", None)
        if ingestion is not None:
            # A code phase whose runs are the ingestion program's (app.services.code.ingestion): the same time
            # limit as the scoring program (CodaLab and Codabench give each step the phase's limit) and runtime.
            phase["ingestion_program"] = True
            inputs = [self.write("input_data.zip", self.zipped(data))] if data is not None else []
            phase["code"] = {
                "ingestion_program": self.write("ingestion_program.zip", self.zipped(ingestion)),
                "inputs": inputs,
                "time_limit_s": phase["execution_time_limit"] or DEFAULT_TIME_LIMIT,
                **({"runtime": image} if image else {}),
            }
        public = []
        for entry in phase.get("public_files", []):
            path = self.path(entry)
            data = self.zipped(entry) if path.is_dir() else path.read_bytes()
            public.append(self.write(entry.get("name") or path.name, data))
        phase["public_files"] = public

    def path(self, entry: dict[str, Any]) -> Path:
        # The translation checked that the entry stays inside the bundle folder.
        return self.source / entry["path"]

    def zipped(self, entry: dict[str, Any]) -> bytes:
        """A folder or file of the bundle as a zip archive (a zip file as it is; another file zipped alone)."""
        path = self.path(entry)
        if path not in self._zips:
            if path.is_dir():
                data = pack_folder(path, max_bytes=MAX_FILE_BYTES)
            else:
                data = path.read_bytes()
                if not is_zip(data):
                    data = _zip_one(path.name, data)
            self._zips[path] = data
        return self._zips[path]

    def write(self, name: str, data: bytes) -> dict[str, Any]:
        self.count += 1
        relative = f"{STAGED}/{self.count}-{name}"
        (self.into / relative).write_bytes(data)
        return {"path": relative, "name": name}


class _PlainDumper(yaml.SafeDumper):
    """Writes a value used twice out twice: Podium's bundle reader accepts no YAML aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _zip_one(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()
