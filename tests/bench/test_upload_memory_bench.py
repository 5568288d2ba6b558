"""The upload memory benchmark runs end to end on a small upload and prints every row (nothing here is timed)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from bench.upload_memory_bench import sparse_zip, table, worker_table


def test_the_sparse_program_is_a_zip_of_the_size_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "program.zip"
    sparse_zip(path, 3 * 1024 * 1024 + 1)
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        assert {info.filename: info.file_size for info in archive.infolist()}["weights.bin"] == 3 * 1024 * 1024 + 1


def test_the_table_has_a_row_per_store_and_size() -> None:
    lines = table([2], ["disk", "db"])
    assert lines[0].startswith("date -u: ") and "nproc" in lines[0]
    assert lines[1] == "| store | upload | web peak RSS before | after | added | upload time |"
    assert [line.split(" | ")[:2] for line in lines[3:]] == [["| disk", "2 MB"], ["| db", "2 MB"]]
    assert all(line.count("|") == 7 for line in lines[1:])


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")
def test_the_worker_table_has_a_row_per_store_and_size_and_the_run_succeeds() -> None:
    lines = worker_table([2], ["disk"])
    assert lines[1] == "| store | program | worker peak RSS before | after | added | run |"
    assert lines[3].startswith("| disk | 2 MB | ") and lines[3].endswith("| succeeded, exit 0 |")
