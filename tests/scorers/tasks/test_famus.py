"""FAMuS scorers: hand-computed scores, every refusal, order independence, subsets, fuzzing."""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorers.errors import InvalidGold, InvalidSubmission, OptionsError, ValidationError
from scorers.registry import get_scorer
from tests.conftest import require_shared


def jsonl(*lines: Any) -> bytes:
    return "\n".join(json.dumps(line) for line in lines).encode()


def as_json(value: Any) -> bytes:
    return json.dumps(value).encode()


def problems(error: ValidationError) -> list[str]:
    return [str(problem) for problem in error.problems]


# -- famus-cdae: a small hand-computed case -------------------------------------------------------
PAUSE: dict[str, Any] = {
    "incident_type": "Pause",
    "Place": [],
    "Time": [[["April 24 , 2009", 30, 44, 4, 7, "Time"]]],
    "Agent": [[["the airline"]]],
    "Activity": [[["all of its operations"]]],
    "template-spans": [2, 3, 4],
}
GOLD: list[dict[str, Any]] = [
    # the template is listed twice and counts once: 3 gold mentions
    {"docid": "A", "templates": [PAUSE, PAUSE]},
    # no gold template and nothing predicted: the empty-document rule adds 1 to every sum
    {"docid": "B", "templates": []},
    # left out of the submission: its gold mention only counts in recall
    {"docid": "C", "templates": [{"incident_type": "Stop", "Agent": [[["Microsoft"]], []]}]},
]
SUBMISSION: dict[str, Any] = {
    "A": [
        {
            "incident_type": "Pause",
            "Time": [["April 24 , 2009"]],
            "Agent": ["the airline"],  # a bare string is the whole text
            "Activity": [["operations", 5, 6]],  # offsets after the text are ignored
            "Invented": [["x"]],
        }
    ],
    "B": [],
}


def cdae(options: dict[str, Any] | None = None) -> Any:
    return get_scorer("famus-cdae", options)


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
        scorer.parse_submission(as_json(submission), gold)
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
        scorer.parse_submission(data, scorer.parse_gold(jsonl(*GOLD)))
    assert message in str(info.value)


def test_cdae_submission_problems_are_collected_in_one_pass() -> None:
    scorer = cdae()
    bad = {"Z": [], "A": [{"incident_type": "P", "Agent": "x", "Time": [1, 2]}], "C": "none"}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(bad), scorer.parse_gold(jsonl(*GOLD)))
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
def _random_case(seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rng = random.Random(seed)
    words = ["the", "man", "he", "old", "harbour", "2009", "Late", "of"]

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))

    gold, submission = [], {}
    for d in range(12):
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
    subset = scorer.compute(parsed, scorer.parse_submission(as_json(submission), parsed), units=chosen)
    restricted_gold = [line for line in gold if line["docid"] in chosen]
    restricted_submission = {k: v for k, v in submission.items() if k in chosen}
    alone = scorer.score(jsonl(*restricted_gold), as_json(restricted_submission))
    assert subset.metrics == pytest.approx(alone.metrics, abs=1e-12)


def test_cdae_real_case_is_order_independent() -> None:
    case = require_shared("conformance", "famus-cdae", "dev-part-report-chatgpt")
    gold_lines = (case / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    submission = json.loads((case / "submission.json").read_text(encoding="utf-8"))
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))["metrics"]
    random.Random(7).shuffle(gold_lines)
    reordered = dict(reversed(list(submission.items())))
    report = cdae().score("\n".join(gold_lines).encode(), as_json(reordered))
    assert report.metrics == pytest.approx(expected, abs=1e-9)


# -- famus-sv -------------------------------------------------------------------------------------
SV_GOLD: list[dict[str, Any]] = [
    {"instance_id": "i1", "frame": "Cure", "valid_source": True, "bool_generated": False},
    {"instance_id": "i2", "frame": "Cure", "valid_source": False, "bool_generated": True},
    {"instance_id": "i3", "frame": "Kidnapping", "valid_source": True},
    {"instance_id": "i4", "valid_source": False},
]


def sv() -> Any:
    return get_scorer("famus-sv")


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
        scorer.parse_submission(as_json(submission), scorer.parse_gold(jsonl(*SV_GOLD)))
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
        scorer.parse_submission(data, scorer.parse_gold(jsonl(*SV_GOLD)))
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
    subset = scorer.compute(parsed, scorer.parse_submission(as_json(submission), parsed), units=chosen)
    alone = scorer.score(
        jsonl(*[line for line in gold if line["instance_id"] in chosen]),
        as_json({k: v for k, v in submission.items() if k in chosen}),
    )
    assert subset.metrics == alone.metrics


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
            scorer.parse_submission(data, gold)


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
        submission = scorer.parse_submission(as_json(_mutate(SUBMISSION, data.draw)), gold)
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
        parsed = scorer.parse_submission(as_json(_mutate(submission, data.draw)), gold)
    except ValidationError:
        return
    assert set(scorer.compute(gold, parsed).metrics) == {"accuracy", "precision", "recall", "f1"}


# -- famus-cdae: size limits ----------------------------------------------------------------------
def cdae_refusal(submission: Any, options: dict[str, Any] | None = None) -> list[str]:
    """The problems ``parse_submission`` refuses ``submission`` with (the test fails if it is accepted)."""
    scorer = cdae(options)
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(submission), scorer.parse_gold(jsonl(*GOLD)))
    return problems(info.value)


def with_template(docid: str, template: dict[str, Any], copies: int = 1) -> dict[str, Any]:
    return {**SUBMISSION, docid: [template] * copies}


def test_cdae_templates_per_document_limit() -> None:
    template = SUBMISSION["A"][0]
    report = cdae({"max_templates_per_document": 2}).score(jsonl(*GOLD), as_json(with_template("A", template, 2)))
    assert report.units["A"]["predicted"] == 2 * 4  # predicted templates are not collapsed
    assert cdae_refusal(with_template("A", template, 3), {"max_templates_per_document": 2}) == [
        'document "A": 3 templates; at most 2 are accepted (option max_templates_per_document)'
    ]


def test_cdae_fillers_per_role_limit() -> None:
    # 500 distinct fillers (the default limit) are accepted, 501 are not; a repeated filler counts as listed.
    fillers = [[f"x{i}"] for i in range(500)]
    report = cdae().score(jsonl(*GOLD), as_json(with_template("C", {"incident_type": "Stop", "Agent": fillers})))
    assert report.units["C"]["predicted"] == 500
    assert cdae_refusal(with_template("C", {"incident_type": "Stop", "Agent": [*fillers, ["x0"]]})) == [
        'document "C", template 0, role "Agent": 501 fillers; at most 500 are accepted (option max_fillers_per_role)'
    ]


def test_cdae_filler_length_limit() -> None:
    longest = "w" * 3000
    report = cdae().score(jsonl(*GOLD), as_json(with_template("C", {"incident_type": "Stop", "Agent": [longest]})))
    assert report.units["C"]["predicted"] == 1
    assert cdae_refusal(with_template("C", {"incident_type": "Stop", "Agent": ["x", ["w" * 3001, 0, 1]]})) == [
        'document "C", template 0, role "Agent", filler 1: the text has 3001 characters; at most 3000 are accepted '
        "(option max_filler_chars)"
    ]


# What SUBMISSION costs, role by role of document A (gold: Time "April 24 , 2009" (4 tokens), Agent "the
# airline" (2), Activity "all of its operations" (4); one mention each):
#   comparisons: one filler per role, so no clean-up pair; similarity pairs 1 x 1 for Time, Agent and
#   Activity, none for Invented (not a gold role): 3. Token pairs: Time 4 x 4, Agent 2 x 2, Activity 4 x 1
#   ("operations"): 16 + 4 + 4 = 24. Documents B (no template) and C (left out) cost nothing.
def test_cdae_comparisons_limit() -> None:
    assert cdae({"max_comparisons": 3}).score(jsonl(*GOLD), as_json(SUBMISSION)).metrics["ceaf_rme_phi3_p"] == 0.6
    assert cdae_refusal(SUBMISSION, {"max_comparisons": 2}) == [
        'document "A", template 0, role "Time": the submission would cost 3 string comparisons in all, the most (1) '
        "for this role; at most 2 are accepted (option max_comparisons)"
    ]


def test_cdae_comparisons_count_the_clean_up_pairs() -> None:
    # Agent in C: 3 distinct fillers ('x' twice), 3 * 2 / 2 = 3 clean-up pairs, and 3 pairs with the one gold
    # mention 'Microsoft': 6, plus the 3 of document A.
    agent = {"incident_type": "Stop", "Agent": [["x"], ["y"], ["z"], ["x"]]}
    parsed = cdae({"max_comparisons": 9}).parse_submission(
        as_json(with_template("C", agent)), cdae().parse_gold(jsonl(*GOLD))
    )
    assert parsed["C"][0].mentions == {"Agent": 3}
    (message,) = cdae_refusal(with_template("C", agent), {"max_comparisons": 8})
    assert message.startswith('document "C", template 0, role "Agent": the submission would cost 9 string comparisons')
    # Without the clean-up, only the 3 + 3 similarity pairs remain.
    separate = cdae({"max_comparisons": 6, "join_substrings": False}).score(
        jsonl(*GOLD), as_json(with_template("C", agent))
    )
    assert separate.units["C"]["predicted"] == 3


def test_cdae_token_pairs_limit() -> None:
    report = cdae({"max_token_pairs": 24}).score(jsonl(*GOLD), as_json(SUBMISSION))
    assert report.metrics == cdae().score(jsonl(*GOLD), as_json(SUBMISSION)).metrics
    assert cdae_refusal(SUBMISSION, {"max_token_pairs": 23}) == [
        'document "A", template 0, role "Time": the submission would cost 24 token pairs in all, the most (16) '
        "for this role; at most 23 are accepted (option max_token_pairs)"
    ]


def test_cdae_gold_is_held_to_the_part_limits() -> None:
    options = {"max_templates_per_document": 1, "max_fillers_per_role": 2, "max_filler_chars": 10}
    lines = [
        {"docid": "T", "templates": [{"incident_type": "F"}, {"incident_type": "G"}]},
        {"docid": "M", "templates": [{"incident_type": "F", "R": [[["a"], ["b"]], [["c"]]]}]},
        {"docid": "L", "templates": [{"incident_type": "F", "R": [[["0123456789x"]]]}]},
        {"docid": "OK", "templates": [{"incident_type": "F", "R": [[["0123456789"]], [["b"]]]}]},
    ]
    with pytest.raises(InvalidGold) as info:
        cdae(options).parse_gold(jsonl(*lines))
    assert problems(info.value) == [
        'line 1, document "T": 2 templates; at most 1 are accepted (option max_templates_per_document)',
        'line 2, templates[0], role "R": 3 mentions; at most 2 are accepted (option max_fillers_per_role)',
        'line 3, templates[0], role "R", entity 0, mention 0: the mention text has 11 characters; at most 10 are '
        "accepted (option max_filler_chars)",
    ]


def test_cdae_absurd_submissions_are_refused_before_the_clean_up() -> None:
    # Joining 100,000 fillers of one role would test 5 billion pairs; ten roles of 500 fillers 1.2 million.
    # Both are refused by parse_submission, which cleans nothing up until every limit has been checked.
    scorer = cdae()
    gold = scorer.parse_gold(jsonl(*GOLD))
    huge = {"incident_type": "Stop", "Agent": [[f"filler {i}"] for i in range(100_000)]}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json({"C": [huge]}), gold)
    assert problems(info.value) == [
        'document "C", template 0, role "Agent": 100000 fillers; at most 500 are accepted (option max_fillers_per_role)'
    ]
    wide = {"incident_type": "Stop", **{f"R{r}": [[f"{r} {i}"] for i in range(500)] for r in range(10)}}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json({"C": [wide]}), gold)
    # 10 roles * 500 * 499 / 2 pairs; none is a gold role, so no similarity pair.
    assert problems(info.value) == [
        'document "C", template 0, role "R0": the submission would cost 1247500 string comparisons in all, the '
        "most (124750) for this role; at most 500000 are accepted (option max_comparisons)"
    ]
    with pytest.raises(InvalidSubmission, match="the text has 10000000 characters"):
        scorer.parse_submission(as_json({"C": [{"incident_type": "Stop", "Agent": ["x" * 10_000_000]}]}), gold)


def test_sv_absurd_submission_is_refused_key_by_key() -> None:
    # famus-sv needs no limit: 50,000 unknown ids cost one look-up each; 20 are listed, all are counted.
    scorer = sv()
    labels = {line["instance_id"]: 1 for line in SV_GOLD} | {f"x{i}": 1 for i in range(50_000)}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(labels), scorer.parse_gold(jsonl(*SV_GOLD)))
    assert info.value.total == 50_000
    assert len(info.value.problems) == 20
