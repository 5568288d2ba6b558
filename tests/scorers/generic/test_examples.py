"""The example bundles of the generic scorers (examples/): their golds load with the bundle's options and with the
defaults, and the contract test's perfect submission reaches the maximum under both."""

from __future__ import annotations

import pytest
import yaml

from scorers import get_scorer
from tests.conftest import ROOT
from tests.scorers.test_contract import PERFECT


@pytest.mark.parametrize("name", ["trec", "classification", "regression"])
def test_the_example_bundles_perfect_submission_reaches_the_maximum(name: str) -> None:
    bundle = ROOT / "examples" / name
    task = yaml.safe_load((bundle / "competition.yaml").read_text(encoding="utf-8"))["tasks"][0]
    gold = (bundle / task["phases"][0]["gold"]["path"]).read_bytes()
    submission, expected = PERFECT[name][1](gold)
    for options in ({}, task.get("scorer_options", {})):
        assert get_scorer(name, options).score(gold, submission).metrics == pytest.approx(expected, abs=1e-12)
