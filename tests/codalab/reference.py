"""The reference bundles' sample result submissions, and their programs run by hand (no sandbox, no Podium).

Result submissions are made from the bundles' own files: for the Codabench bundle, a task's reference
labels as the prediction; for the CodaLab bundle, what its ingestion program makes of the sample code
submission (submission_15.zip), run by hand as the bundle's README explains.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from codalab.archives import is_zip, pack_folder, unpack
from codalab.program import parse_scores, program_root, read_command
from tests.conftest import ROOT, require_shared

LEGACY_RUNTIME = ROOT / ".runtimes" / "codalab-legacy"


def legacy_runtime() -> Path:
    """The runtime CodaLab's legacy programs need (old numpy and PyYAML), built by ``make runtimes``."""
    if not (LEGACY_RUNTIME / ".installed").exists():
        pytest.fail(f"the legacy runtime is missing at {LEGACY_RUNTIME}: run 'make runtimes' (make test does)")
    return LEGACY_RUNTIME


def bundle(name: str, into: Path) -> Path:
    """A reference bundle unpacked into ``into``."""
    with zipfile.ZipFile(require_shared("reference", "codabench", name)) as archive:
        archive.extractall(into)
    return into


def _zip_folder(folder: Path) -> bytes:
    return pack_folder(folder, max_bytes=1 << 30)


def _bytes_of(path: Path) -> bytes:
    return _zip_folder(path) if path.is_dir() else path.read_bytes()


def zip_files(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def v2_result(folder: Path, task: str = "first", duration: float = 0.25) -> bytes:
    """A result submission for a Codabench task: its reference labels as the prediction."""
    labels = (folder / task / "reference_data" / "testing_label").read_bytes()
    return zip_files({"prediction": labels, "metadata.json": json.dumps({"duration": duration}).encode()})


def v15_result(folder: Path) -> bytes:
    """A result submission for the CodaLab bundle: its ingestion program run by hand on the sample code."""
    python = legacy_runtime() / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, source in (("ingestion", "ingestion_program.zip"), ("input", "evaluation_data.zip")):
            unpack((folder / source).read_bytes(), work / name, max_bytes=1 << 30, max_entries=1000)
        code = require_shared("reference", "codabench", "submission_15.zip").read_bytes()
        unpack(code, work / "code", max_bytes=1 << 20, max_entries=100)
        done = subprocess.run(
            [
                str(python),
                "ingestion.py",
                str(work / "input"),
                str(work / "out"),
                str(work / "ingestion"),
                str(work / "code"),
            ],
            cwd=work / "ingestion",
            capture_output=True,
            check=False,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        return zip_files({p.name: p.read_bytes() for p in (work / "out").iterdir()})


def v2_ingested_by_hand(folder: Path, task: str) -> bytes:
    """What the Codabench bundle's ingestion program writes for the sample code submission (submission.zip), run
    by hand as its metadata.yaml says (``ingestion.py input_data output program ingested_program``), zipped."""
    python = legacy_runtime() / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        code = require_shared("reference", "codabench", "submission.zip").read_bytes()
        unpack(code, work / "code", max_bytes=1 << 20, max_entries=100)
        (work / "out").mkdir()
        program, data = folder / "ingestion_program", folder / task / "input_data"
        args = [str(python), "ingestion.py", str(data), str(work / "out"), str(program), str(work / "code")]
        done = subprocess.run(args, cwd=program, capture_output=True, check=False, timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        return zip_files({p.name: p.read_bytes() for p in (work / "out").iterdir()})


def by_hand(program: Path, reference: Path, result: bytes, runtime: Path) -> dict[str, float]:
    """What the program prints as scores when run by hand: the command in a folder laid out like CodaLab's."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        unpack(_bytes_of(program), work / "program", max_bytes=1 << 30, max_entries=10_000)
        ref = _bytes_of(reference)
        if is_zip(ref):
            unpack(ref, work / "input" / "ref", max_bytes=1 << 30, max_entries=10_000)
        unpack(result, work / "input" / "res", max_bytes=1 << 30, max_entries=10_000)
        (work / "output").mkdir()
        root = program_root(work / "program")
        command = read_command(root)
        paths = {"program": root, "input": work / "input", "output": work / "output"}
        command = re.sub(r"\$(program|input|output)\b", lambda m: str(paths[m.group(1)]), command)
        command = command.replace("/app/program", str(root)).replace("/app/input", str(work / "input"))
        command = command.replace("/app/output", str(work / "output"))
        env = {"PATH": f"{runtime}/bin:/usr/bin:/bin", "HOME": tmp, "LANG": "C.UTF-8"}
        done = subprocess.run(
            ["/bin/sh", "-c", command], cwd=root, env=env, capture_output=True, check=False, timeout=300
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        scores, _ = parse_scores(work / "output")
        return scores


def runtimes_table() -> str:
    """``PODIUM_PROGRAM_RUNTIMES`` for the tests: the legacy images on the legacy runtime."""
    runtime = str(legacy_runtime())
    return json.dumps({"codalab/codalab-legacy:py3": runtime, "codalab/codalab-legacy:py37": runtime})
