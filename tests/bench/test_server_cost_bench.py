"""The server cost benchmark runs the real upload and scoring services on a fresh database and scores every upload."""

from __future__ import annotations

import pytest

from bench.server_cost_bench import generic_inputs, main
from scorers import get_scorer


@pytest.mark.parametrize("scorer", ["classification", "regression"])
def test_generated_generic_inputs_are_accepted_and_scored(scorer: str) -> None:
    inputs = generic_inputs(scorer, rows=50)
    report = get_scorer(scorer, inputs.options).score(inputs.gold, inputs.submission)
    assert 0.0 < report.metrics[get_scorer(scorer, inputs.options).primary_metric] < 1.0


def test_every_measured_upload_is_scored(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--scorers", "classification,regression", "--repeat", "2", "--markdown"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| scorer | mode | submission KB | upload ms | job ms | upload + job ms |")
    rows = {tuple(line.lstrip("| ").split(" | ")[:2]): line for line in table[1:]}
    # each scorer in both modes: the upload's parse handed to the job, and the job parsing the blob again
    assert set(rows) == {(s, m) for s in ("classification", "regression") for m in ("embedded", "distributed")}
    # the warm-up upload and the two measured ones, all scored
    assert all(line.rstrip(" |").endswith("3/3") for line in rows.values())
