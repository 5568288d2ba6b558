"""The sandbox benchmark runs end to end on one repetition and reports every row (nothing here is timed)."""

from __future__ import annotations

from bench.sandbox_bench import measure


def test_every_case_is_measured() -> None:
    rows = measure(1)
    assert [name for name, _, _ in rows] == [
        "/bin/true",
        "python, writes scores.json",
        "python + numpy, writes scores.json",
        "whole run_program (unpack, run, read scores)",
    ]
    assert all(direct > 0 and boxed > 0 for _, direct, boxed in rows)
