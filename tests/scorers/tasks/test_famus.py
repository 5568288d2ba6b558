"""FAMuS scorers: hand-computed scores, every refusal, order independence, subsets, fuzzing."""

from __future__ import annotations

import contextlib
import json
import random
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorers.errors import InvalidGold, InvalidSubmission, OptionsError, ValidationError
from tests.conftest import require_shared
from tests.scorers.tasks.famus_data import GOLD, SUBMISSION, SV_GOLD, as_json, cdae, jsonl, sv


def test_cdae_hand_computed() -> None:
    report = cdae().score(jsonl(*GOLD), as_json(SUBMISSION))
    # A: phi3 2 (Time, Agent); soft 2 + 'operations' vs 'all of its operations' 2*1/(1+4) = 0.4 -> 2.4;
    #    4 predicted mentions (the invented role counts), 3 gold. B: +1 to all four sums. C: 1 gold.
    # phi3: P = 3/5, R = 3/5. soft: P = R = 3.4/5 = 0.68.
    m = report.metrics
    assert m["ceaf_rme_phi3_p"] == pytest.approx(0.6)
    assert m["ceaf_rme_phi3_r"] == pytest.approx(0.6)
    assert m["ceaf_rme_phi3_f1"] == pytest.approx(0.6)
    assert m["ceaf_rme_soft_p"] == pytest.approx(0.68)
    assert m["ceaf_rme_soft_r"] == pytest.approx(0.68)
    assert m["ceaf_rme_soft_f1"] == pytest.approx(0.68)
    assert set(report.units) == {"A", "B", "C"}
    json.dumps(report.to_dict(with_units=True))  # plain JSON values only


def test_cdae_breakdowns() -> None:
    report = cdae().score(jsonl(*GOLD), as_json(SUBMISSION))
    roles = report.breakdown["role"]
    # only names the gold uses; Place has no filler anywhere, Invented is not a gold role
    assert set(roles) == {"Time", "Agent", "Activity"}
    # Agent: 1 predicted (A), 2 gold (A, C), 1 exact -> P = 1, R = 1/2
    assert roles["Agent"]["ceaf_rme_phi3_p"] == 1.0
    assert roles["Agent"]["ceaf_rme_phi3_r"] == 0.5
    assert roles["Activity"]["ceaf_rme_soft_f1"] == pytest.approx(0.4)
    documents = report.breakdown["document"]
    assert documents["B"]["ceaf_rme_phi3_f1"] == 1.0
    assert documents["C"]["ceaf_rme_soft_r"] == 0.0
    # A: phi3 P = 2/4, R = 2/3
    assert documents["A"]["ceaf_rme_phi3_p"] == 0.5
    assert documents["A"]["ceaf_rme_phi3_r"] == pytest.approx(2 / 3)
    assert "Invented" not in json.dumps(report.units)


def test_cdae_empty_document_rule_option() -> None:
    report = cdae({"empty_document_rule": False}).score(jsonl(*GOLD), as_json(SUBMISSION))
    # without B's +1: phi3 P = 2/4, R = 2/4
    assert report.metrics["ceaf_rme_phi3_p"] == 0.5
    assert report.metrics["ceaf_rme_phi3_r"] == 0.5


def test_cdae_join_substrings_option() -> None:
    gold = jsonl({"docid": "D", "templates": [{"incident_type": "F", "P": [[["the man"]], [["he"]]]}]})
    submission = as_json({"D": [{"incident_type": "F", "P": [["the man"], ["he"]]}]})
    # joined: 'he' is inside 'the man', one predicted entity of 2 mentions matches one gold entity: 1 of 2
    assert cdae().score(gold, submission).metrics["ceaf_rme_phi3_r"] == 0.5
    assert cdae({"join_substrings": False}).score(gold, submission).metrics["ceaf_rme_phi3_r"] == 1.0


def test_cdae_multilabel_frames_option() -> None:
    gold = jsonl({"docid": "D", "templates": [{"incident_type": "Attack / Bombing", "T": [[["x"]]]}]})
    submission = as_json({"D": [{"incident_type": "Bombing", "T": [["x"]]}]})
    # split: 1 matched of 1 predicted and 2 gold mentions (each label's copy counts, as officially)
    assert cdae().score(gold, submission).metrics["ceaf_rme_phi3_r"] == 0.5
    assert cdae({"multilabel_frames": False}).score(gold, submission).metrics["ceaf_rme_phi3_r"] == 0.0


def test_cdae_options_are_checked() -> None:
    with pytest.raises(OptionsError, match="unknown option"):
        cdae({"threshold": 0.5})
    with pytest.raises(OptionsError, match="must be of type bool"):
        cdae({"empty_document_rule": 1})


def test_cdae_gold_against_itself_scores_one() -> None:
    gold = [line for line in GOLD if line["docid"] != "B"]
    submission = {
        line["docid"]: [
            {
                "incident_type": t["incident_type"],
                **{
                    r: [[m[0]] for e in v for m in e]
                    for r, v in t.items()
                    if r not in ("incident_type", "template-spans")
                },
            }
            for t in line["templates"][:1]
        ]
        for line in gold
    }
    assert set(cdae().score(jsonl(*gold), as_json(submission)).metrics.values()) == {1.0}


# -- famus-cdae: refusals -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("submission", "where", "message"),
    [
        ({"Z": []}, 'document "Z"', "is not a docid of the gold"),
        ({"A": {"incident_type": "Pause"}}, 'document "A"', "must be a list of templates"),
        ({"A": ["Pause"]}, 'document "A", template 0', "a template must be an object"),
        ({"A": [{"Agent": [["x"]]}]}, 'document "A", template 0', 'needs a string "incident_type"'),
        ({"A": [{"incident_type": 3}]}, 'document "A", template 0', 'needs a string "incident_type"'),
        ({"A": [{"incident_type": "P", "Agent": "x"}]}, 'document "A", template 0, role "Agent"', "list of fillers"),
        ({"A": [{"incident_type": "P", "Agent": [["x"], 42]}]}, 'role "Agent", filler 1', "non-empty list"),
        ({"A": [{"incident_type": "P", "Agent": [[]]}]}, 'role "Agent", filler 0', "non-empty list"),
        ({"A": [{"incident_type": "P", "Agent": [[42, "x"]]}]}, "filler 0", "first element is the text"),
        ({"A": [{"incident_type": "P", "Agent": [[["x"]]]}]}, "filler 0", "first element is the text"),
        ({"A": [{"incident_type": "P", "Agent": [None]}]}, "filler 0", "non-empty list"),
    ],
)
def test_cdae_submission_refusals(submission: Any, where: str, message: str) -> None:
    scorer = cdae()
    gold = scorer.parse_gold(jsonl(*GOLD))
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(submission), scorer.public_view(gold))
    (problem,) = info.value.problems
    assert where in problem.where
    assert message in problem.message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "the file is empty"),
        (b"A\t[]\n", "not valid JSON"),
        (b'{"A": [], "A": []}', "appears more than once"),
        (b'[{"docid": "A", "templates": []}]', "expected a JSON object mapping each docid"),
        (b'{"A": [', "not valid JSON"),
    ],
)
def test_cdae_submission_file_refusals(data: bytes, message: str) -> None:
    scorer = cdae()
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(data, scorer.public_view(scorer.parse_gold(jsonl(*GOLD))))
    assert message in str(info.value)


def test_cdae_submission_problems_are_collected_in_one_pass() -> None:
    scorer = cdae()
    bad = {"Z": [], "A": [{"incident_type": "P", "Agent": "x", "Time": [1, 2]}], "C": "none"}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(bad), scorer.public_view(scorer.parse_gold(jsonl(*GOLD))))
    # unknown Z, A's string role and two bad fillers, C's value
    assert info.value.total == 5


@pytest.mark.parametrize(
    ("line", "where", "message"),
    [
        (["A"], "line 2", 'expected an object with "docid"'),
        ({"templates": []}, "line 2", '"docid" must be a string'),
        ({"docid": "A", "templates": []}, "line 2", "appears more than once in the gold"),
        ({"docid": "N", "templates": {}}, "line 2", '"templates" of document "N" must be a list'),
        ({"docid": "N", "templates": ["Pause"]}, "line 2, templates[0]", "a template must be an object"),
        ({"docid": "N", "templates": [{"Agent": []}]}, "line 2, templates[0]", 'needs a string "incident_type"'),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": "x"}]}, 'role "Agent"', "list of entities"),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": ["x"]}]}, "entity 0", "list of mentions"),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": [["x"]]}]}, "mention 0", "list whose first"),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": [[[]]]}]}, "mention 0", "list whose first"),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": [[[7]]]}]}, "mention 0", "list whose first"),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": [[[""]]]}]}, "mention 0", "empty or only"),
        ({"docid": "N", "templates": [{"incident_type": "F", "Agent": [[["x"], [" \t"]]]}]}, "mention 1", "whitespace"),
    ],
)
def test_cdae_gold_refusals(line: Any, where: str, message: str) -> None:
    with pytest.raises(InvalidGold) as info:
        cdae().parse_gold(jsonl(GOLD[0], line))
    (problem,) = info.value.problems
    assert where in problem.where
    assert message in problem.message


def test_cdae_gold_ignores_template_spans_and_empty_entities() -> None:
    gold = cdae().parse_gold(
        jsonl({"docid": "N", "templates": [{"incident_type": "F", "template-spans": "?", "A": [[]]}]})
    )
    (template,) = gold.documents["N"]
    assert template.roles == (("A", ()),)
    assert gold.roles == frozenset({"A"})


# -- famus-cdae: order independence and subsets ---------------------------------------------------
def _random_case(seed: int, documents: int = 12) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rng = random.Random(seed)
    words = ["the", "man", "he", "old", "harbour", "2009", "Late", "of"]

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))

    gold, submission = [], {}
    for d in range(documents):
        templates = [
            {"incident_type": rng.choice("FG"), **{r: [[[text()]] for _ in range(rng.randint(0, 2))] for r in "ABC"}}
            for _ in range(rng.choice([0, 1, 1, 2]))
        ]
        gold.append({"docid": f"d{d}", "templates": templates})
        if rng.random() < 0.8:
            submission[f"d{d}"] = [
                {"incident_type": rng.choice("FG"), **{r: [[text()] for _ in range(rng.randint(0, 3))] for r in "AB"}}
                for _ in range(rng.choice([0, 1, 2]))
            ]
    return gold, submission


@pytest.mark.parametrize("seed", range(5))
def test_cdae_order_of_lines_keys_and_templates_does_not_matter(seed: int) -> None:
    gold, submission = _random_case(seed)
    expected = cdae().score(jsonl(*gold), as_json(submission)).metrics
    rng = random.Random(seed + 100)
    rng.shuffle(gold)
    keys = list(submission)
    rng.shuffle(keys)
    shuffled = {k: list(reversed([{r: t[r] for r in reversed(list(t))} for t in submission[k]])) for k in keys}
    assert cdae().score(jsonl(*gold), as_json(shuffled)).metrics == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_cdae_subset_equals_restricted_gold(seed: int) -> None:
    gold, submission = _random_case(seed)
    chosen = ["d1", "d4", "d5", "d11"]
    scorer = cdae()
    parsed = scorer.parse_gold(jsonl(*gold))
    subset = scorer.compute(
        parsed, scorer.parse_submission(as_json(submission), scorer.public_view(parsed)), units=chosen
    )
    restricted_gold = [line for line in gold if line["docid"] in chosen]
    restricted_submission = {k: v for k, v in submission.items() if k in chosen}
    alone = scorer.score(jsonl(*restricted_gold), as_json(restricted_submission))
    assert subset.metrics == pytest.approx(alone.metrics, abs=1e-12)


@pytest.mark.parametrize(
    "options", [{}, {"empty_document_rule": False}, {"join_substrings": False}, {"multilabel_frames": False}]
)
def test_cdae_report_without_units_is_compute_s(options: dict[str, Any]) -> None:
    """``compute_report`` adds each document's statistics as it is made: the same report, to the bit."""
    for seed in range(4):
        gold, submission = _random_case(seed, documents=40)
        scorer = cdae(options)
        parsed = scorer.parse_gold(jsonl(*gold))
        predicted = scorer.parse_submission(as_json(submission), scorer.public_view(parsed))
        expected = scorer.compute(parsed, predicted).to_dict()
        assert json.dumps(scorer.compute_report(parsed, predicted)) == json.dumps(expected)


def test_cdae_report_without_units_never_holds_every_document_s_statistics() -> None:
    """The statistics (a few hundred bytes a document) are dropped as they are added: the report's peak is a small
    part of ``compute``'s, which holds them all (the rows of equal sums are shared by both)."""
    gold, submission = _random_case(7, documents=3000)
    scorer = cdae()
    parsed = scorer.parse_gold(jsonl(*gold))
    predicted = scorer.parse_submission(as_json(submission), scorer.public_view(parsed))

    def peak(compute: Callable[[], dict[str, Any]]) -> int:
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            report = compute()
            most = tracemalloc.get_traced_memory()[1] - base
            del report
            return most
        finally:
            tracemalloc.stop()

    scorer.compute_report(parsed, predicted)  # what either keeps after a first scoring (a cache) is not counted
    held = peak(lambda: scorer.compute(parsed, predicted).to_dict())
    streamed = peak(lambda: scorer.compute_report(parsed, predicted))
    assert streamed < held / 3, (streamed, held)


def test_cdae_real_case_is_order_independent() -> None:
    case = require_shared("conformance", "famus-cdae", "dev-part-report-chatgpt")
    gold_lines = (case / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    submission = json.loads((case / "submission.json").read_text(encoding="utf-8"))
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))["metrics"]
    random.Random(7).shuffle(gold_lines)
    reordered = dict(reversed(list(submission.items())))
    report = cdae().score("\n".join(gold_lines).encode(), as_json(reordered))
    assert report.metrics == pytest.approx(expected, abs=1e-9)


# -- fuzzing: nothing but ValidationError ---------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mutate(value: Any, draw: Any) -> Any:
    """Replace one randomly chosen node of a JSON value by an arbitrary JSON value."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _mutate(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutate(value[index], draw), *value[index + 1 :]]
    return draw(JSON_VALUES)


@FUZZ
@given(st.binary(max_size=200))
def test_arbitrary_bytes_are_refused_or_parsed(data: bytes) -> None:
    for scorer in (cdae(), sv()):
        try:
            gold = scorer.parse_gold(data)
        except ValidationError:
            gold = scorer.parse_gold(jsonl(*(GOLD if scorer.name == "famus-cdae" else SV_GOLD)))
        with contextlib.suppress(ValidationError):
            scorer.parse_submission(data, scorer.public_view(gold))


@FUZZ
@given(st.data())
def test_mutated_cdae_files_never_crash(data: st.DataObject) -> None:
    scorer = cdae()
    gold_lines = _mutate(GOLD, data.draw)
    try:
        gold = scorer.parse_gold(jsonl(*gold_lines) if isinstance(gold_lines, list) else as_json(gold_lines))
    except ValidationError:
        gold = scorer.parse_gold(jsonl(*GOLD))
    try:
        submission = scorer.parse_submission(as_json(_mutate(SUBMISSION, data.draw)), scorer.public_view(gold))
    except ValidationError:
        return
    report = scorer.compute(gold, submission)
    assert all(0.0 <= value <= 1.0 for value in report.metrics.values())
    json.dumps(report.to_dict(with_units=True))


@FUZZ
@given(st.data())
def test_mutated_sv_files_never_crash(data: st.DataObject) -> None:
    scorer = sv()
    gold_lines = _mutate(SV_GOLD, data.draw)
    try:
        gold = scorer.parse_gold(jsonl(*gold_lines) if isinstance(gold_lines, list) else as_json(gold_lines))
    except ValidationError:
        gold = scorer.parse_gold(jsonl(*SV_GOLD))
    submission = {line["instance_id"]: 1 for line in SV_GOLD}
    try:
        parsed = scorer.parse_submission(as_json(_mutate(submission, data.draw)), scorer.public_view(gold))
    except ValidationError:
        return
    assert set(scorer.compute(gold, parsed).metrics) == {"accuracy", "precision", "recall", "f1"}
