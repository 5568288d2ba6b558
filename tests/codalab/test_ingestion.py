"""The ingestion programs' conventions: which uploads are code, and what an ingestion command's placeholders mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from codalab import ingestion
from codalab.archives import unpack
from codalab.program import program_root, read_command
from tests.codalab.reference import bundle, v2_result, zip_files
from tests.conftest import require_shared


def test_the_reference_code_submissions_are_code_and_their_result_submissions_are_not(tmp_path: Path) -> None:
    for name in ("submission.zip", "submission_15.zip"):  # model.py alone; model.py with a metadata file
        assert ingestion.is_code_submission(require_shared("reference", "codabench", name).read_bytes()), name
    folder = bundle("competition_v2_multi_task.zip", tmp_path / "bundle")
    assert not ingestion.is_code_submission(v2_result(folder))  # prediction and metadata.json
    assert not ingestion.is_code_submission(zip_files({"prediction.pickle": b"\x80\x04"}))


@pytest.mark.parametrize(
    ("files", "code"),
    [
        ({"metadata": b"command: python run.py"}, True),
        ({"metadata.yaml": b"description: imported by the ingestion program"}, True),
        ({"mine/metadata": b"", "mine/weights.bin": b"0"}, True),  # zipped with its folder
        ({"src/model.R": b"f <- 1"}, True),
        ({"predictions/metadata": b"", "other/x.csv": b"1"}, False),  # a metadata file deeper down is data
        ({"__MACOSX/model.py": b"", "answers.csv": b"1"}, False),
    ],
)
def test_a_metadata_file_at_the_top_or_a_source_file_makes_a_zip_code(files: dict[str, bytes], code: bool) -> None:
    assert ingestion.is_code_submission(zip_files(files)) is code


def test_what_is_not_a_zip_is_not_code() -> None:
    assert not ingestion.is_code_submission(b"model.py")


def test_the_placeholders_of_the_codalab_ingestion_command_name_codabench_paths(tmp_path: Path) -> None:
    folder = bundle("competition_15.zip", tmp_path / "bundle")
    unpack((folder / "ingestion_program.zip").read_bytes(), tmp_path / "ingestion", max_bytes=1 << 30, max_entries=99)
    command = read_command(program_root(tmp_path / "ingestion"))
    assert command == "python3 $ingestion_program/ingestion.py $input $output $ingestion_program $submission_program"
    assert ingestion.substitute(command) == (
        "python3 /app/program/ingestion.py /app/input_data /app/output /app/program /app/ingested_program"
    )
    # Longer names first, whole names only; the reference data's placeholder names a path never mounted here.
    assert ingestion.substitute("${shared}/x $hidden $inputs $predictions $tmp") == (
        "/app/shared/x /app/input/ref $inputs /app/output /app/output"
    )


def test_the_status_file_is_what_codabench_adds_to_the_output() -> None:
    text = ingestion.status_file(ingestion_exit_code=0, elapsed_seconds=1.5)
    assert text == "elapsedTime: 1.5\nexitCode: null\ningestionElapsedTime: 1.5\ningestionExitCode: 0\n"
