"""FAMuS CDAE scores the usual document (one gold template, one filled predicted one) from the gold held flat: the
same sums, types and order as the general alignment of the same documents as ``Template``s."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from scorers.errors import InvalidSubmission
from scorers.families.ceaf import DocumentScorer
from scorers.families.ceaf_aggregation import CeafTotals
from scorers.families.ceaf_cost import role_work
from scorers.families.ceaf_templates import clean_predicted_template
from tests.scorers.tasks.famus_data import as_json, cdae, jsonl

WORDS = ["the", "old", "harbour", "man", "2009", "of", "Late", "city"]
ROLES = ["Agent", "Place", "Time", "Theme"]


def _case(seed: int, predicted_roles: list[str] = ROLES) -> tuple[bytes, bytes]:
    """Ten documents of one gold template and one predicted template each, of random frames, roles and texts
    (one or several entities and mentions, exact, partial and no matches, frames that differ or hold a '/',
    fillers that the substring clean-up joins); the predicted templates' roles drawn from ``predicted_roles``."""
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))

    def gold_role() -> list[list[list[Any]]]:
        return [[[text()] for _ in range(rng.choice([1, 1, 1, 2]))] for _ in range(rng.choice([0, 1, 1, 1, 2, 3]))]

    gold, submission = [], {}
    for d in range(10):
        frame = rng.choice(["F", "F", "G", "F / G"])
        template: dict[str, Any] = {"incident_type": frame}
        for role in rng.sample(ROLES, rng.randint(1, 4)):
            template[role] = gold_role()
        gold.append({"docid": f"d{d}", "templates": [template]})
        predicted: dict[str, Any] = {"incident_type": rng.choice([frame, frame, "F", "H"])}
        for role in rng.sample(predicted_roles, rng.randint(1, 4)):
            fillers = [text() for _ in range(rng.choice([0, 1, 1, 1, 2, 3]))]
            if fillers and rng.random() < 0.4:  # a word of another filler: the clean-up joins it to that one
                fillers.append(rng.choice(fillers[0].split()))
            predicted[role] = [[filler] for filler in fillers]
        submission[f"d{d}"] = [predicted]
    return jsonl(*gold), as_json(submission)


@pytest.mark.parametrize("join", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_flat_gold_scores_as_the_general_alignment(seed: int, join: bool) -> None:
    gold_bytes, submission_bytes = _case(seed)
    scorer = cdae({"join_substrings": join})
    gold = scorer.parse_gold(gold_bytes)
    submission = scorer.parse_submission(submission_bytes, scorer.public_view(gold))
    for roles in (None, gold.roles):
        flat = DocumentScorer(scorer._ceaf_options, gold.tokens.reader(), roles)
        general = DocumentScorer(scorer._ceaf_options, gold.tokens.reader(), roles)
        general.soft = None  # no shortcut: every document through the general alignment
        for docid, alone in gold.templates.items():  # each document's one template, held alone
            expected = json.dumps(general(gold.documents[docid], submission[docid]))
            # json.dumps tells an int 0 from a float 0.0, and keeps the keys' order.
            assert json.dumps(flat(gold.documents[docid], submission[docid])) == expected
            held = submission.filled(docid)
            assert held == [(template.frame, template.filled) for template in submission[docid]]
            found = flat.score_flat(alone, held)
            shortcut = sum(1 for _, roles in held if roles) == 1 and "/" not in alone[0]
            assert (found is not None) == shortcut
            assert found is None or json.dumps(found) == expected
    report = scorer.compute(gold, submission)  # the scorer's path: the shortcut, or Templates
    general = DocumentScorer(scorer._ceaf_options, gold.tokens.reader(), gold.roles)
    general.soft = None
    for docid in gold.templates:
        assert json.dumps(report.units[docid]) == json.dumps(general(gold.documents[docid], submission[docid]))


@pytest.mark.parametrize("seed", range(20))
def test_role_totals_are_the_sums_of_the_documents_roles(seed: int) -> None:
    """With ``role_totals`` a document's role sums go there, added in document order as ``CeafTotals.extend`` adds
    them from the documents' ``roles`` (the same floats, to the bit), and the documents' other sums are unchanged:
    on the flat shortcut and the general alignment, every role kept and the gold's roles only."""
    gold_bytes, submission_bytes = _case(seed, [*ROLES, "Invented"])  # a role no gold template has
    scorer = cdae()
    gold = scorer.parse_gold(gold_bytes)
    submission = scorer.parse_submission(submission_bytes, scorer.public_view(gold))
    for roles, shortcut in itertools.product((None, gold.roles), (True, False)):
        plain = DocumentScorer(scorer._ceaf_options, gold.tokens.reader(), roles)
        totals: dict[str, list[float]] = {}
        summing = DocumentScorer(scorer._ceaf_options, gold.tokens.reader(), roles, totals)
        if not shortcut:
            plain.soft = summing.soft = None
        expected = CeafTotals(roles=roles)
        for docid, alone in gold.templates.items():
            found = plain.score_flat(alone, submission.filled(docid)) if shortcut else None
            if found is None:
                found = plain(gold.documents[docid], submission[docid])
                summed = summing(gold.documents[docid], submission[docid])
            else:
                summed = summing.score_flat(alone, submission.filled(docid))
            assert summed is not None and summed["roles"] == {}
            assert json.dumps({**found, "roles": {}}) == json.dumps(summed)
            expected.extend([found])
        assert json.dumps(totals, sort_keys=True) == json.dumps(expected.totals, sort_keys=True)
        assert ("Invented" in totals) == (roles is None)


def _budget(submission: dict[str, Any], largest: tuple[int, int]) -> tuple[int, int]:
    """The submission's cost from its raw fillers (``role_work`` of each role's distinct texts)."""
    comparisons = token_pairs = 0
    for templates in submission.values():
        for template in templates:
            for role, fillers in template.items():
                if role != "incident_type" and fillers:
                    more, pairs = role_work({filler[0] for filler in fillers}, largest)
                    comparisons, token_pairs = comparisons + more, token_pairs + pairs
    return comparisons, token_pairs


@pytest.mark.parametrize("seed", range(10))
def test_held_submission_cleans_up_and_costs_as_its_raw_fillers(seed: int) -> None:
    """A predicted role of one distinct text is held as that text alone, an empty text too: cleaned up and
    counted against the budgets as the role's raw fillers are."""
    gold_bytes, submission_bytes = _case(seed)
    raw = json.loads(submission_bytes)
    rng = random.Random(seed)
    for templates in raw.values():  # empty texts, and one text given twice (one distinct text)
        for template in templates:
            role = rng.choice(ROLES)
            template[role] = rng.choice([[[""]], [["", 1]], [["the man"], ["the man"]], [[""], ["old"]]])
    scorer = cdae()
    gold = scorer.parse_gold(gold_bytes)
    submission = scorer.parse_submission(as_json(raw), scorer.public_view(gold))
    for docid, templates in raw.items():
        expected = [
            clean_predicted_template(
                template["incident_type"],
                [
                    (role, [filler[0] for filler in fillers])
                    for role, fillers in template.items()
                    if role != "incident_type"
                ],
            )
            for template in templates
        ]
        assert submission[docid] == expected
        assert submission.filled(docid) == [(template.frame, template.filled) for template in expected]
    comparisons, token_pairs = _budget(raw, gold.largest_role)
    for name, cost in (("max_comparisons", comparisons), ("max_token_pairs", token_pairs)):
        limited = cdae({name: cost})
        limited.parse_submission(as_json(raw), limited.public_view(limited.parse_gold(gold_bytes)))
        under = cdae({name: cost - 1})
        with pytest.raises(InvalidSubmission, match="the submission would cost"):
            under.parse_submission(as_json(raw), under.public_view(under.parse_gold(gold_bytes)))
