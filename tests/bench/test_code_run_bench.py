"""The code run benchmark runs end to end on one run of each measure and prints every row (nothing here is timed)."""

from __future__ import annotations

import shutil

import pytest

from bench.code_run_bench import table

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")


def test_the_table_has_every_measure() -> None:
    lines = table(1)
    assert lines[0].startswith("date -u: ") and "nproc" in lines[0] and "load average" in lines[0]
    assert lines[1] == "| measure | runs | median | p90 |"
    assert [line.split(" | ")[0] for line in lines[3:]] == [
        "| queue to start (upload 202 to program started)",
        "| code run of a program that exits at once",
        "| the same command run directly",
        "| sandbox overhead (added)",
    ]
    assert all(line.count("|") == 5 for line in lines[1:])
