"""FAMuS source validation (``famus-sv``): hand-computed scores, every refusal, order independence, subsets."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scorers.errors import InvalidGold, InvalidSubmission
from tests.scorers.tasks.famus_data import SV_GOLD, as_json, jsonl, sv


def test_sv_hand_computed() -> None:
    # i1 TP, i2 FP, i3 FN, i4 TN: accuracy 2/4, P = 1/2, R = 1/2, F1 = 1/2
    report = sv().score(jsonl(*SV_GOLD), as_json({"i1": 1, "i2": True, "i3": False, "i4": 0}))
    assert report.metrics == {"accuracy": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5}
    # by frame: Cure has i1 (TP) and i2 (FP): P = 1/2, R = 1; Kidnapping has i3 (FN); i4 has no frame
    frames = report.breakdown["frame"]
    assert set(report.breakdown) == {"frame"}
    assert set(frames) == {"Cure", "Kidnapping"}
    assert frames["Cure"] == {"accuracy": 0.5, "precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3)}
    assert frames["Kidnapping"]["recall"] == 0.0
    assert report.units["i2"] == {"gold": 0, "predicted": 1}


def test_sv_without_frames_has_no_breakdown() -> None:
    report = sv().score(jsonl({"instance_id": "x", "valid_source": 1}), as_json({"x": 1}))
    assert report.breakdown == {}
    assert report.metrics["f1"] == 1.0


@pytest.mark.parametrize(
    ("submission", "where", "message"),
    [
        ({"i1": 1, "i2": 0, "i3": 1}, '"i4"', "has no label"),
        ({"i1": 1, "i2": 0, "i3": 1, "i4": 0, "i5": 1}, '"i5"', "is not an instance_id of the gold"),
        ({"i1": "1", "i2": 0, "i3": 1, "i4": 0}, '"i1"', "must be 0, 1, true or false"),
        ({"i1": 1.0, "i2": 0, "i3": 1, "i4": 0}, '"i1"', "not 1.0"),
        ({"i1": 2, "i2": 0, "i3": 1, "i4": 0}, '"i1"', "not 2"),
        ({"i1": "yes", "i2": 0, "i3": 1, "i4": 0}, '"i1"', 'not "yes"'),
        ({"i1": None, "i2": 0, "i3": 1, "i4": 0}, '"i1"', "not null"),
    ],
)
def test_sv_submission_refusals(submission: Any, where: str, message: str) -> None:
    scorer = sv()
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(submission), scorer.public_view(scorer.parse_gold(jsonl(*SV_GOLD))))
    (problem,) = info.value.problems
    assert where in problem.where
    assert message in problem.message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"i1,1\ni2,0\n", "not valid JSON"),
        (b"[1, 0, 1, 0]", "labels are matched by id, not by position"),
        (b'{"i1": 1, "i2": 0, "i3": 1, "i4": 0, "i1": 0}', "appears more than once"),
        (b'{"i1": 1, "i2": 0', "not valid JSON"),
    ],
)
def test_sv_submission_file_refusals(data: bytes, message: str) -> None:
    scorer = sv()
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(data, scorer.public_view(scorer.parse_gold(jsonl(*SV_GOLD))))
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("i9", 'expected an object with "instance_id"'),
        ({"valid_source": True}, '"instance_id" must be a string'),
        ({"instance_id": "i1", "valid_source": True}, "appears more than once in the gold"),
        ({"instance_id": "i9", "valid_source": "yes"}, '"valid_source" must be true or false'),
        ({"instance_id": "i9"}, '"valid_source" must be true or false'),
        ({"instance_id": "i9", "valid_source": True, "frame": 3}, '"frame" must be a string'),
    ],
)
def test_sv_gold_refusals(line: Any, message: str) -> None:
    with pytest.raises(InvalidGold) as info:
        sv().parse_gold(jsonl(SV_GOLD[0], line))
    (problem,) = info.value.problems
    assert problem.where == "line 2"
    assert message in problem.message


def test_sv_order_independence_and_subset() -> None:
    rng = random.Random(3)
    gold = [{"instance_id": f"i{k}", "frame": rng.choice("XYZ"), "valid_source": rng.random() < 0.4} for k in range(40)]
    submission = {line["instance_id"]: rng.choice([0, 1, True, False]) for line in gold}
    scorer = sv()
    expected = scorer.score(jsonl(*gold), as_json(submission))
    shuffled_gold = gold[:]
    rng.shuffle(shuffled_gold)
    reordered = dict(reversed(list(submission.items())))
    assert scorer.score(jsonl(*shuffled_gold), as_json(reordered)).metrics == expected.metrics
    chosen = [f"i{k}" for k in range(0, 40, 3)]
    parsed = scorer.parse_gold(jsonl(*gold))
    subset = scorer.compute(
        parsed, scorer.parse_submission(as_json(submission), scorer.public_view(parsed)), units=chosen
    )
    alone = scorer.score(
        jsonl(*[line for line in gold if line["instance_id"] in chosen]),
        as_json({k: v for k, v in submission.items() if k in chosen}),
    )
    assert subset.metrics == alone.metrics
