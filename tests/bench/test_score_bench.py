"""The scorer benchmark: its arithmetic, the verdict on the targets, the reference parse and its child runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.score_bench import ChildRun, _elapsed, failure, parse_args, plain_parse, run_child
from bench.score_report import Measure, render, verdict


def measure(scale: int, total: float, **fields: float) -> Measure:
    """A measure whose reading + parse + compute take ``total`` seconds (a tenth, half, the rest)."""
    m = Measure("svident-detection", scale, input_bytes=100_000_000 * scale // 100, units=scale)
    m.read_s, m.parse_s, m.compute_s = 0.1 * total, 0.5 * total, 0.4 * total
    for name, value in fields.items():
        setattr(m, name, value)
    return m


def test_ratios_of_one_measure() -> None:
    m = measure(100, 3.0, baseline_s=1.5, peak_bytes=300_000_000, start_bytes=100_000_000, baseline_peak_bytes=0)
    # (0.3 + 1.5 + 1.2) / 1.5 = 2.0; (300 MB - 100 MB) / 100 MB of input = 2.0
    assert m.parse_ratio == pytest.approx(2.0)
    assert m.memory_ratio == pytest.approx(2.0)


def test_verdict_names_each_target_met_or_missed() -> None:
    common = {"baseline_s": 1.0, "start_bytes": 100_000_000}
    measures = [
        measure(1, 1.0, **common, peak_bytes=101_000_000, podium_s=2.0),
        measure(10, 9.0, **common, peak_bytes=110_000_000, podium_s=10.0),
        # 100x: 130 / 9 = 14.4x growth (over 12); ratio 130 / 40 = 3.25 (over 3); memory (250 - 100) / 100 = 1.5;
        # speedup 1634 / 100 = 16.34x.
        measure(
            100,
            130.0,
            baseline_s=40.0,
            start_bytes=100_000_000,
            peak_bytes=250_000_000,
            podium_s=100.0,
            podium_peak_bytes=310_000_000,
        ),
    ]
    text = verdict(measures)
    assert "linear MISSED (9.0x, 14.4x)" in text
    assert "within 3x of parsing at 100x MISSED (3.25x)" in text
    assert "memory at 100x met (1.50x the input)" in text
    # The whole podium score process: 310 MB for 100 MB of input, over 3x.
    assert "podium score's peak at 100x MISSED (3.10x the input)" in text
    assert "podium score's peak" not in verdict(measures[:2])  # not measured at 10x in this example
    assert "10x faster than the recorded anchor at 100x met (16.3x)" in text


def test_skipped_scale_shows_dashes_and_its_reason() -> None:
    done = measure(1, 1.0, baseline_s=1.0, podium_s=2.0)
    skipped = Measure("svident-detection", 10, input_bytes=5_000_000, skipped="needs about 9.0 GB")
    text = render([done, skipped], markdown=True)
    lines = text.splitlines()
    assert lines[0].startswith("| scale | input MB |")
    assert lines[3].startswith("| 10x | 5.0 | - | - |")
    assert lines[-1] == "10x not measured: needs about 9.0 GB"
    # Growth needs two measured scales ten times apart, so the verdict leaves it out.
    assert verdict([done, skipped]).startswith("targets: within 3x of parsing at 1x")


def test_elapsed_is_per_step_and_clock() -> None:
    marks = [{"wall": 1.0, "cpu": 0.5}, {"wall": 3.0, "cpu": 1.0}, {"wall": 3.5, "cpu": 1.25}]
    assert _elapsed(marks, ["read", "parse"]) == {
        "wall:read": 2.0,
        "cpu:read": 0.5,
        "wall:parse": 0.5,
        "cpu:parse": 0.25,
    }


def test_plain_parse_reads_each_format(tmp_path: Path) -> None:
    (tmp_path / "g.tsv").write_text('a\tb\n"x\ty"\t2\n', encoding="utf-8")
    (tmp_path / "g.jsonl").write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    (tmp_path / "s.json").write_text('{"k": [1, 2]}', encoding="utf-8")
    assert plain_parse(tmp_path / "g.tsv") == [["a", "b"], ["x\ty", "2"]]
    assert plain_parse(tmp_path / "g.jsonl") == [{"a": 1}, {"a": 2}]
    assert plain_parse(tmp_path / "s.json") == {"k": [1, 2]}
    (tmp_path / "run.txt").write_bytes(b"q1\tQ0  d1 1 2.5 t\r\nq1 Q0 d2 2 1 t")
    assert plain_parse(tmp_path / "run.txt") == [
        [b"q1", b"Q0", b"d1", b"1", b"2.5", b"t"],
        [b"q1", b"Q0", b"d2", b"2", b"1", b"t"],
    ]


def test_arguments_are_checked() -> None:
    args = parse_args(["--scales", "1,10", "--scorers", "scier-re", "--repeat", "2"])
    assert (args.scales, args.scorers, args.repeat) == ([1, 10], ["scier-re"], 2)
    with pytest.raises(SystemExit):
        parse_args(["--scorers", "nope"])
    with pytest.raises(SystemExit):
        parse_args(["--scales", "ten"])


def test_a_child_over_its_memory_limit_fails_with_a_reason(tmp_path: Path) -> None:
    # 400 MB asked under a 300 MB address-space limit: the child dies of MemoryError, the caller lives on.
    command = [sys.executable, "-c", "x = bytearray(400_000_000)"]
    run = run_child(command, memory_limit=300_000_000, stdout=tmp_path / "out")
    assert run.code == 1
    assert failure(run) == "exit code 1: MemoryError"


def test_a_child_that_prints_its_result_reports_time_and_peak(tmp_path: Path) -> None:
    run = run_child([sys.executable, "-c", "print('{}')"], memory_limit=2_000_000_000, stdout=tmp_path / "out")
    assert run.code == 0
    assert (tmp_path / "out").read_text() == "{}\n"
    assert run.peak > 0 and run.wall > 0


def test_failure_names_a_kill_by_signal() -> None:
    assert failure(ChildRun(-9, 1.0, 1.0, 0, "")) == "killed by signal 9 (out of memory?)"
    assert failure(ChildRun(2, 1.0, 1.0, 0, "Traceback\nValueError: bad\n")) == "exit code 2: ValueError: bad"


def test_verdict_holds_podium_score_to_the_paired_floor() -> None:
    top = measure(10, 2.0, baseline_s=1.0, podium_s=3.0, paired_ratio=1.62)
    assert "within 1.5x of the floor at 10x MISSED (1.62x)" in verdict([top])
    top.paired_ratio = 1.2
    assert "within 1.5x of the floor at 10x met (1.20x)" in verdict([top])
    top.paired_cpu_ratio = 1.1
    assert "| 1.20x | 1.10x |" in render([top], markdown=True)
