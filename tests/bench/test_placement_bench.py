"""The placement benchmark runs end to end on two waiting runs and prints every row (nothing here is timed)."""

from __future__ import annotations

import shutil

import pytest

from bench.placement_bench import table

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed here")


def test_the_table_has_every_measure() -> None:
    lines = table(2)
    assert lines[0].startswith("date -u: ") and "nproc" in lines[0] and "load average" in lines[0]
    assert lines[1] == "| measure | runs | median | p90 |"
    assert [line.split(" | ")[0] for line in lines[3:]] == [
        "| a claim's check of the worker's offer (sandbox, GPUs)",
        "| one sweep of 2 waiting GPU runs (each sent, left untaken)",
        "| the same, per waiting run",
    ]
    assert all(line.count("|") == 5 for line in lines[1:])
