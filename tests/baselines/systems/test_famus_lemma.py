"""famus-sv-lemma: the trigger-lemma-in-source baseline for FAMuS source validation."""

from __future__ import annotations

import json

import pytest

from baselines import Cancelled
from tests.baselines.support import EXAMPLES, Recorder, run, score, trivial
from tests.conftest import require_shared

NAME, SCORER = "famus-sv-lemma", "famus-sv"


def _line(instance_id: str, trigger: str, source: str, valid: bool) -> dict[str, object]:
    return {
        "instance_id": instance_id,
        "frame": "Arrest",
        "report_dict": {"doctext": f"They {trigger} him .", "frame-trigger-span": [trigger, 5, 12, 1, 1, ""]},
        "source_dict": {"doctext": source},
        "valid_source": valid,
        "bool_generated": False,
    }


def _jsonl(*lines: object) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_trigger_or_its_lemma_among_the_source_lemmas_means_valid() -> None:
    gold = _jsonl(
        _line("same-form", "arrested", "Police arrested a man .", True),
        _line("other-form", "arrested", "Police will arrest a man .", True),
        _line("plural", "arrests", "One arrest was made .", True),
        _line("absent", "arrested", "A man was detained .", False),
        _line("multi-word", "let go of", "They let go of him .", True),
        _line("case", "Arrested", "Police arrested a man .", True),
    )
    submission = json.loads(run(NAME, SCORER, gold))
    # arrested -> arrest is a source lemma (from "arrested" or "arrest"), and so is arrests -> arrest.
    # A multi-word trigger is never one token, as in FAMuS. simplemma lemmatises a capitalised word
    # through its lower-case form, so "Arrested" -> "arrest" is found too.
    assert submission == {"same-form": 1, "other-form": 1, "plural": 1, "absent": 0, "multi-word": 0, "case": 1}
    # 4 true positives, 1 false negative, 1 true negative: P 1, R 4/5, F1 = 2 * 4/5 / (9/5) = 8/9.
    assert score(SCORER, gold, json.dumps(submission).encode())["f1"] == pytest.approx(8 / 9)


def test_progress_counts_instances_and_cancel_stops_the_run() -> None:
    gold = (EXAMPLES / "famus/data/sv-dev.jsonl").read_bytes()
    recorder = Recorder()
    run(NAME, SCORER, gold, recorder=recorder)
    assert recorder.progress == [(0, 6), (6, 6)]
    with pytest.raises(Cancelled):
        run(NAME, SCORER, gold, recorder=Recorder(stop_after=1))


def test_on_the_example_data_the_submission_is_accepted() -> None:
    gold = (EXAMPLES / "famus/data/sv-dev.jsonl").read_bytes()
    submission = run(NAME, SCORER, gold)
    assert set(json.loads(submission).values()) <= {0, 1}
    assert "f1" in score(SCORER, gold, submission)
    assert run(NAME, SCORER, gold) == submission


def test_on_the_example_data_it_beats_the_all_zeros_submission() -> None:
    gold = (EXAMPLES / "famus/data/sv-test.jsonl").read_bytes()
    # Measured: right on 4 of 6 lines (one valid source paraphrases the trigger, one invalid one repeats
    # it): P 2/3, R 2/3, F1 2/3; all zeros: 0.
    assert score(SCORER, gold, run(NAME, SCORER, gold))["f1"] > score(SCORER, gold, trivial(SCORER, gold))["f1"]


def test_on_the_release_it_beats_all_zeros_and_mostly_agrees_with_the_wordnet_original() -> None:
    case = require_shared("conformance", "famus-sv", "dev-part-addendum-lemma")
    gold = (case / "gold.jsonl").read_bytes()
    release = require_shared("data", "famus", "FACTSlab_FAMuS", "data", "source_validation")
    wanted = {json.loads(line)["instance_id"] for line in gold.splitlines() if line.strip()}
    lines = [
        line
        for name in ("dev.jsonl", "addendum.jsonl")
        for line in (release / name).read_bytes().splitlines()
        if line.strip() and json.loads(line)["instance_id"] in wanted
    ]
    full_gold = b"\n".join(lines)
    submission = json.loads(run(NAME, SCORER, full_gold))
    official = json.loads((case / "submission.json").read_bytes())
    agree = sum(submission[key] == official[key] for key in official)
    # Measured: 130 of 142 (simplemma also lemmatises verbs; WordNet was called for nouns only).
    assert agree >= 0.85 * len(official)
    metrics = score(SCORER, full_gold, json.dumps(submission).encode())
    # Measured: F1 0.680 (the WordNet original: 0.659); all zeros: 0.
    assert metrics["f1"] > 0.5
