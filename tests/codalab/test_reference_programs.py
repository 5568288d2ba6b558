"""The reference bundles' scoring programs in the sandbox give the numbers they give when run by hand."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codalab.archives import pack_folder
from codalab.program import TEAM_FAILURE, run_program
from sandbox import Limits, runtime_at
from tests.codalab.reference import bundle, by_hand, legacy_runtime, v2_result, v15_result

LIMITS = Limits(wall_seconds=300)


def folder_or_file(path: Path) -> bytes:
    return pack_folder(path, max_bytes=1 << 30) if path.is_dir() else path.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("task", ["first", "second"])
def test_codabench_program(tmp_path: Path, task: str) -> None:
    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    result = v2_result(folder, task, duration=1.5)
    program, reference = folder / "scoring_program", folder / task / "reference_data"
    expected = by_hand(program, reference, result, legacy_runtime())
    assert expected == {"accuracy": 1.0, "duration": 1.5}
    outcome = run_program(
        folder_or_file(program), folder_or_file(reference), result, limits=LIMITS, runtime=runtime_at(legacy_runtime())
    )
    assert outcome.ok, outcome.run and outcome.run.stderr
    assert outcome.scores == expected


@pytest.mark.slow
def test_codalab_program(tmp_path: Path) -> None:
    folder = bundle("competition_15.zip", tmp_path / "bundle")
    result = v15_result(folder)
    reference = folder / "evaluation_data.zip"
    expected = by_hand(folder / "scoring_program.zip", reference, result, legacy_runtime())
    assert set(expected) == {"prediction_score", "Duration"} and expected["prediction_score"] > 0
    outcome = run_program(
        folder_or_file(folder / "scoring_program.zip"),
        reference.read_bytes(),
        result,
        limits=LIMITS,
        runtime=runtime_at(legacy_runtime()),
    )
    assert outcome.ok, outcome.run and outcome.run.stderr
    assert outcome.scores == expected


@pytest.mark.slow
def test_codalab_program_folder_fails_as_it_does_by_hand(tmp_path: Path) -> None:
    """The folder competition.yaml names holds a score.py that mixes tabs and spaces: Python 3 refuses it."""
    folder = bundle("competition_15.zip", tmp_path / "bundle")
    python = legacy_runtime() / "bin" / "python"
    by_hand_run = subprocess.run([str(python), str(folder / "scoring_program" / "score.py")], capture_output=True)
    assert by_hand_run.returncode != 0 and b"TabError" in by_hand_run.stderr
    outcome = run_program(
        folder_or_file(folder / "scoring_program"),
        (folder / "evaluation_data.zip").read_bytes(),
        v15_result(folder),
        limits=LIMITS,
        runtime=runtime_at(legacy_runtime()),
    )
    assert outcome.failure == TEAM_FAILURE and outcome.run is not None
    assert b"TabError" in outcome.run.stderr and outcome.run.exit_code == 1
