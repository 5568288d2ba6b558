"""FAMuS size limits: each part and budget refused at its limit, measured on the submission and the phase's
published largest gold role alone, and the gold held to its own limits."""

from __future__ import annotations

from typing import Any

import pytest

from scorers.errors import InvalidGold, InvalidSubmission
from tests.scorers.tasks.famus_data import GOLD, SUBMISSION, SV_GOLD, as_json, cdae, jsonl, problems, sv


def cdae_refusal(submission: Any, options: dict[str, Any] | None = None) -> list[str]:
    """The problems ``parse_submission`` refuses ``submission`` with (the test fails if it is accepted)."""
    scorer = cdae(options)
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(submission), scorer.public_view(scorer.parse_gold(jsonl(*GOLD))))
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


# What SUBMISSION costs is bounded from the submission and the public view alone, whatever each document's gold
# holds (the secrecy rule: a count that involved a document's gold mentions would tell participants how many its
# role has). Every predicted role is taken to face the phase's largest gold role, the one figure it publishes:
# GOLD's is 1 mention (every role) of 4 tokens (A's Time and Activity). Document A's roles hold one filler each,
# of 4 tokens (Time), 2 (Agent), 1 (Activity: "operations") and 1 (Invented): comparisons 4 x 1 = 4, no clean-up
# pair; token pairs (4 + 2 + 1 + 1) x 4 = 32. Documents B (no template) and C (left out) cost nothing.
LARGEST = "; each filler is counted against the phase's largest gold role, 1 mention of 4 tokens"


def test_cdae_public_view_publishes_the_largest_gold_role() -> None:
    scorer = cdae()
    public = scorer.public_view(scorer.parse_gold(jsonl(*GOLD)))
    assert public.ids == ("A", "B", "C")
    assert public.largest_role == (1, 4)
    (note,) = scorer.format_notes(public)
    assert note.startswith("The largest role of this phase's gold in one document holds 1 mention of 4 tokens in all.")
    assert "at most 2,000,000 string comparisons and 40,000,000 token pairs" in note
    # Over a document's templates, and the most mentions and the most tokens each over every role.
    lines = [
        {
            "docid": "D",
            "templates": [{"incident_type": "F", "R": [[["a"], ["b"]]]}, {"incident_type": "G", "R": [[["c"]]]}],
        },
        {"docid": "E", "templates": [{"incident_type": "F", "R": [[["a b c d e"]]], "S": []}]},
    ]
    assert scorer.public_view(scorer.parse_gold(jsonl(*lines))).largest_role == (3, 5)
    assert scorer.public_view(scorer.parse_gold(jsonl({"docid": "D", "templates": []}))).largest_role == (0, 0)


def test_cdae_comparisons_limit() -> None:
    report = cdae({"max_comparisons": 4}).score(jsonl(*GOLD), as_json(SUBMISSION))
    assert report.metrics["ceaf_rme_phi3_p"] == 0.6
    assert cdae_refusal(SUBMISSION, {"max_comparisons": 3}) == [
        'document "A", template 0, role "Time": the submission would cost 4 string comparisons in all, the most (1) '
        "for this role; at most 3 are accepted (option max_comparisons)" + LARGEST
    ]


def test_cdae_comparisons_count_the_clean_up_pairs() -> None:
    # Agent in C: 3 distinct fillers ('x' twice), 3 * 2 / 2 = 3 clean-up pairs, and 3 pairs with the (at most)
    # one gold mention: 6, plus the 4 of document A.
    agent = {"incident_type": "Stop", "Agent": [["x"], ["y"], ["z"], ["x"]]}
    scorer = cdae({"max_comparisons": 10})
    parsed = scorer.parse_submission(
        as_json(with_template("C", agent)), scorer.public_view(scorer.parse_gold(jsonl(*GOLD)))
    )
    assert parsed["C"][0].mentions == {"Agent": 3}
    (message,) = cdae_refusal(with_template("C", agent), {"max_comparisons": 9})
    assert message.startswith('document "C", template 0, role "Agent": the submission would cost 10 string comparisons')
    # Without the clean-up, only the 3 + 4 similarity pairs remain.
    separate = cdae({"max_comparisons": 7, "join_substrings": False}).score(
        jsonl(*GOLD), as_json(with_template("C", agent))
    )
    assert separate.units["C"]["predicted"] == 3


def test_cdae_token_pairs_limit() -> None:
    report = cdae({"max_token_pairs": 32}).score(jsonl(*GOLD), as_json(SUBMISSION))
    assert report.metrics == cdae().score(jsonl(*GOLD), as_json(SUBMISSION)).metrics
    assert cdae_refusal(SUBMISSION, {"max_token_pairs": 31}) == [
        'document "A", template 0, role "Time": the submission would cost 32 token pairs in all, the most (16) '
        "for this role; at most 31 are accepted (option max_token_pairs)" + LARGEST
    ]


def test_cdae_cost_does_not_depend_on_the_gold() -> None:
    # Document A with other roles filled, or with no gold template at all (C's Agent then the largest role): the
    # same public view, so the same refusal, word for word.
    other = {"incident_type": "Pause", "Time": [[["yesterday at noon sharp"]]], "Place": [[["Paris"]]]}
    agent = {"docid": "C", "templates": [{"incident_type": "Stop", "Agent": [[["Microsoft of Redmond Washington"]]]}]}
    golds = [
        GOLD,
        [{"docid": "A", "templates": [other]}, *GOLD[1:]],
        [{"docid": "A", "templates": []}, GOLD[1], agent],
    ]
    messages, views = set(), set()
    for gold in golds:
        scorer = cdae({"max_comparisons": 3})
        public = scorer.public_view(scorer.parse_gold(jsonl(*gold)))
        views.add(public)
        with pytest.raises(InvalidSubmission) as info:
            scorer.parse_submission(as_json(SUBMISSION), public)
        messages.add(str(info.value))
    assert len(views) == 1
    assert len(messages) == 1
    # Only the published figure moves the count: a gold whose largest role holds 2 mentions doubles it.
    pair = {"docid": "C", "templates": [{"incident_type": "Stop", "Agent": [[["Microsoft"], ["MS"]]]}]}
    (message,) = cdae_refusal_for([*GOLD[:2], pair], SUBMISSION, {"max_comparisons": 3})
    assert "would cost 8 string comparisons" in message
    assert message.endswith("largest gold role, 2 mentions of 4 tokens")


def cdae_refusal_for(gold: list[Any], submission: Any, options: dict[str, Any]) -> list[str]:
    scorer = cdae(options)
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(submission), scorer.public_view(scorer.parse_gold(jsonl(*gold))))
    return problems(info.value)


def test_cdae_gold_is_held_to_its_role_limits() -> None:
    # Over a document's templates: R holds 2 + 1 mentions in D, and 5 tokens in E.
    lines = [
        {
            "docid": "D",
            "templates": [{"incident_type": "F", "R": [[["a"], ["b"]]]}, {"incident_type": "G", "R": [[["c"]]]}],
        },
        {"docid": "E", "templates": [{"incident_type": "F", "R": [[["a b c d e"]]]}]},
        {"docid": "OK", "templates": [{"incident_type": "F", "R": [[["a b"]], [["c d"]]]}]},
    ]
    with pytest.raises(InvalidGold) as info:
        cdae({"max_gold_mentions_per_role": 2, "max_gold_tokens_per_role": 4}).parse_gold(jsonl(*lines))
    assert problems(info.value) == [
        'line 1, document "D", role "R": 3 mentions; at most 2 are accepted (option max_gold_mentions_per_role)',
        'line 2, document "E", role "R": 5 tokens in its mentions; at most 4 are accepted (option '
        "max_gold_tokens_per_role)",
    ]


def test_cdae_gold_is_held_to_the_part_limits() -> None:
    options = {"max_templates_per_document": 1, "max_fillers_per_role": 2, "max_filler_chars": 10}
    lines = [
        {"docid": "T", "templates": [{"incident_type": "F"}, {"incident_type": "G"}]},
        # 3 mentions in a role: fillers_per_role bounds predicted roles; a gold role has limits of its own
        {"docid": "M", "templates": [{"incident_type": "F", "R": [[["a"], ["b"]], [["c"]]]}]},
        {"docid": "L", "templates": [{"incident_type": "F", "R": [[["0123456789x"]]]}]},
        {"docid": "OK", "templates": [{"incident_type": "F", "R": [[["0123456789"]], [["b"]]]}]},
    ]
    with pytest.raises(InvalidGold) as info:
        cdae(options).parse_gold(jsonl(*lines))
    assert problems(info.value) == [
        'line 1, document "T": 2 templates; at most 1 are accepted (option max_templates_per_document)',
        'line 3, templates[0], role "R", entity 0, mention 0: the mention text has 11 characters; at most 10 are '
        "accepted (option max_filler_chars)",
    ]


def test_cdae_absurd_submissions_are_refused_before_the_clean_up() -> None:
    # Joining 100,000 fillers of one role would test 5 billion pairs; sixteen roles of 500 fillers 2 million.
    # Both are refused by parse_submission, which cleans nothing up until every limit has been checked.
    scorer = cdae()
    gold = scorer.parse_gold(jsonl(*GOLD))
    huge = {"incident_type": "Stop", "Agent": [[f"filler {i}"] for i in range(100_000)]}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json({"C": [huge]}), scorer.public_view(gold))
    assert problems(info.value) == [
        'document "C", template 0, role "Agent": 100000 fillers; at most 500 are accepted (option max_fillers_per_role)'
    ]
    wide = {"incident_type": "Stop", **{f"R{r}": [[f"{r} {i}"] for i in range(500)] for r in range(16)}}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json({"C": [wide]}), scorer.public_view(gold))
    # 16 roles * (500 * 499 / 2 clean-up pairs + 500 fillers * 1 mention, GOLD's largest role): 1,996,000 + 8,000.
    assert problems(info.value) == [
        'document "C", template 0, role "R0": the submission would cost 2004000 string comparisons in all, the '
        "most (125250) for this role; at most 2000000 are accepted (option max_comparisons)" + LARGEST
    ]
    with pytest.raises(InvalidSubmission, match="the text has 10000000 characters"):
        scorer.parse_submission(
            as_json({"C": [{"incident_type": "Stop", "Agent": ["x" * 10_000_000]}]}), scorer.public_view(gold)
        )


def test_sv_absurd_submission_is_refused_key_by_key() -> None:
    # famus-sv needs no limit: 50,000 unknown ids cost one look-up each; 20 are listed, all are counted.
    scorer = sv()
    labels = {line["instance_id"]: 1 for line in SV_GOLD} | {f"x{i}": 1 for i in range(50_000)}
    with pytest.raises(InvalidSubmission) as info:
        scorer.parse_submission(as_json(labels), scorer.public_view(scorer.parse_gold(jsonl(*SV_GOLD))))
    assert info.value.total == 50_000
    assert len(info.value.problems) == 20
