"""The load benchmark's pure parts: percentiles, the verdict of a step, the mix's shares and runs, and
the section it writes into RESULTS.md (nothing here is timed)."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import pytest

from bench import load, load_report
from bench.load import Step
from bench.load_mix import UPLOAD_PHASES, Mix, percentile
from scorers import get_scorer
from tests.conftest import ROOT

#: The scorer and gold of each phase the mix uploads to (examples/*/competition.yaml).
PHASE_GOLD = {
    ("svident", "detection", "test"): ("svident-detection", "svident/data/test.tsv"),
    ("svident", "disambiguation", "test"): ("svident-disambiguation", "svident/data/test.tsv"),
    ("famus", "sv", "dev"): ("famus-sv", "famus/data/sv-dev.jsonl"),
}


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert percentile(values, 0.5) == 50.0  # the 50th of 100 values: ceil(0.5 * 100) = 50
    assert percentile(values, 0.99) == 99.0  # ceil(0.99 * 100) = 99
    assert percentile([1.0, 2.0, 3.0], 0.99) == 3.0  # ceil(2.97) = 3
    assert percentile([7.0], 0.01) == 7.0
    assert math.isnan(percentile([], 0.5))


def _step(p99_ms: float, errors: int) -> Step:
    return Step(10, 10.0, 150, 20.0, p99_ms, p99_ms, p99_ms, p99_ms, errors, {"HTTP 500": errors} if errors else {})


def test_a_step_is_held_only_under_500_ms_and_without_errors() -> None:
    assert _step(499.9, 0).held
    assert not _step(500.0, 0).held
    assert not _step(20.0, 1).held


def test_the_mix_has_its_shares_and_spreads_uploads_over_teams() -> None:
    mix = Mix.prepared([f"token-{i}" for i in range(50)])
    rng = random.Random(3)
    drawn = [mix.draw(rng) for _ in range(10_000)]
    kinds = Counter(r.kind for r in drawn)
    # 60/30/10 of 10,000 draws; a binomial share's standard deviation is at most 0.5 %, so 2 % is ample.
    assert kinds["page"] / 10_000 == pytest.approx(0.6, abs=0.02)
    assert kinds["board"] / 10_000 == pytest.approx(0.3, abs=0.02)
    assert kinds["upload"] / 10_000 == pytest.approx(0.1, abs=0.02)
    uploads = [r for r in drawn if r.kind == "upload"]
    assert {r.method for r in uploads} == {"POST"} and all(r.body for r in uploads)
    assert len({r.token for r in uploads}) == 50


@pytest.mark.parametrize("ref", [ref for ref, _ in UPLOAD_PHASES], ids="/".join)
def test_every_prepared_run_is_a_valid_submission(ref: tuple[str, str, str]) -> None:
    name, gold_path = PHASE_GOLD[ref]
    scorer = get_scorer(name)
    gold = scorer.parse_gold((ROOT / "examples" / gold_path).read_bytes())
    runs = Mix.prepared(["t"]).runs[ref]
    assert len(set(runs)) > 1  # the runs differ, so the leaderboard changes as they are scored
    for run in runs:
        scorer.parse_submission(run, scorer.public_view(gold))


def test_the_results_section_replaces_its_old_self_and_leaves_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "RESULTS.md"
    monkeypatch.setattr(load_report, "RESULTS", results)
    results.write_text(f"# Benchmark results\n\n## A\n\na\n\n{load.HEADING}\n\nold\n\n## B\n\nb\n")
    load_report.write_results(f"{load.HEADING}\n\nnew\n")
    assert results.read_text() == f"# Benchmark results\n\n## A\n\na\n\n{load.HEADING}\n\nnew\n\n## B\n\nb\n"
    results.write_text("# Benchmark results\n\n## A\n\na\n")
    load_report.write_results(f"{load.HEADING}\n\nnew\n")
    assert results.read_text() == f"# Benchmark results\n\n## A\n\na\n\n{load.HEADING}\n\nnew\n"
