"""FAMuS CDAE golds with coreference: what an organizer builds from FAMuS's own published files is accepted with the
default options and scored, and a submission's cost stays bounded by the figure the phase publishes.

FAMuS publishes silver coreference clusters of every report and source document
(``coref_clusters/instance_id_to_coref_clusters.json``: per instance id, lists of mention strings). A coref-aware
gold (the ``gold_with_silver_coref`` files FAMuS's ``compute_ceaf_metrics.py --use_coref`` reads) gives each
annotated span the mentions of its cluster, so one role of a source document holds up to 252 mentions; gold limits
sized for single-mention entities refused it. The golds here are built from the files in the shared folder (the
dev gold rebuilt in IterX format, the addendum, the clusters); the tests skip when it is absent.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from scorers.errors import InvalidSubmission
from tests.conftest import require_shared
from tests.scorers.tasks.famus_data import as_json, cdae, jsonl, problems

FAMUS = ("data", "famus")
CLUSTERS = (
    "FACTSlab_FAMuS",
    "data",
    "cross_doc_role_extraction",
    "coref_clusters",
    "instance_id_to_coref_clusters.json",
)
BOOKKEEPING = ("incident_type", "template-spans")
SIDES = ("report", "source")


def famus(*parts: str) -> Path:
    return require_shared(*FAMUS, *parts)


@cache
def clusters() -> dict[str, dict[str, list[list[str]]]]:
    data: dict[str, dict[str, list[list[str]]]] = json.loads(famus(*CLUSTERS).read_text())
    return data


def gold_lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in famus("derived", name).read_text().splitlines() if line.strip()]


def with_clusters(lines: list[dict[str, Any]], side: str) -> list[dict[str, Any]]:
    """Each annotated span replaced by the mentions of the first cluster of its document that holds its text (spans
    of one cluster in a role make one entity); a span in no cluster stays a one-mention entity."""
    out = []
    for line in lines:
        found = clusters().get(line["docid"], {}).get(side, [])
        templates = []
        for template in line["templates"]:
            rebuilt: dict[str, Any] = {}
            for role, entities in template.items():
                if role in BOOKKEEPING:
                    rebuilt[role] = entities
                    continue
                kept, used = [], set()
                for entity in entities:
                    text = entity[0][0]
                    index = next((i for i, cluster in enumerate(found) if text in cluster), None)
                    if index is None:
                        kept.append(entity)
                    elif index not in used:
                        used.add(index)
                        kept.append([[mention] for mention in found[index]])
                rebuilt[role] = kept
            templates.append(rebuilt)
        out.append({"docid": line["docid"], "templates": templates})
    return out


def largest_role(lines: list[dict[str, Any]]) -> tuple[int, int]:
    """The most mentions, and the most tokens, one role of a document holds over its templates."""
    mentions = tokens = 0
    for line in lines:
        sizes: dict[str, list[int]] = {}
        for template in line["templates"]:
            for role, entities in template.items():
                if role not in BOOKKEEPING:
                    size = sizes.setdefault(role, [0, 0])
                    size[0] += sum(map(len, entities))
                    size[1] += sum(len(mention[0].split()) for entity in entities for mention in entity)
        for m, t in sizes.values():
            mentions, tokens = max(mentions, m), max(tokens, t)
    return mentions, tokens


@cache
def coref_gold(side: str) -> list[dict[str, Any]]:
    return with_clusters(gold_lines(f"dev_{side}_gold_iterx.jsonl"), side)


@pytest.mark.parametrize("side", SIDES)
def test_a_coref_gold_is_accepted_with_the_default_options(side: str) -> None:
    lines = coref_gold(side)
    scorer = cdae()
    public = scorer.public_view(scorer.parse_gold(jsonl(*lines)))
    assert public.ids == tuple(line["docid"] for line in lines)
    assert public.largest_role == largest_role(lines)
    if side == "source":  # far beyond the 20 mentions and 100 tokens a gold role was once held to
        assert public.largest_role == (252, 320)


@pytest.mark.parametrize(
    "name", [f"{split}_{side}_gold_iterx.jsonl" for split in ("dev", "addendum") for side in SIDES]
)
def test_the_golds_without_coref_are_accepted_and_publish_their_largest_role(name: str) -> None:
    lines = gold_lines(name)
    scorer = cdae()
    assert scorer.public_view(scorer.parse_gold(jsonl(*lines))).largest_role == largest_role(lines)


@pytest.mark.parametrize("side", SIDES)
def test_every_cluster_of_every_document_in_one_role_is_accepted(side: str) -> None:
    # The most a coref-aware gold built from the cluster file can put in one role: every cluster of the document,
    # for every instance the file covers (train, dev and test).
    lines = [
        {"docid": docid, "templates": [{"incident_type": "F", "All": [[[m] for m in c] for c in sides[side] if c]}]}
        for docid, sides in clusters().items()
    ]
    scorer = cdae()
    largest = scorer.public_view(scorer.parse_gold(jsonl(*lines))).largest_role
    assert largest == largest_role(lines)
    assert largest == ((32, 78) if side == "report" else (787, 1399))


def first_mentions(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """A submission of each gold entity's first mention, as FAMuS's ``gold_instances_to_predicted_format`` builds."""
    out: dict[str, Any] = {}
    for line in lines:
        out[line["docid"]] = [
            {"incident_type": t["incident_type"]}
            | {role: [[e[0][0]] for e in entities] for role, entities in t.items() if role not in BOOKKEEPING}
            for t in line["templates"]
        ]
    return out


@pytest.mark.parametrize("side", SIDES)
def test_a_coref_gold_scores_its_own_first_mentions_exactly(side: str) -> None:
    # Each predicted filler is the first mention of a gold entity, so every one matches (precision 1, both
    # similarities); recall is the distinct first mentions over every gold mention, the clusters' included.
    lines = coref_gold(side)
    predicted = gold = 0
    for line in lines:
        ((template,),) = (line["templates"],)
        for role, entities in template.items():
            if role not in BOOKKEEPING:
                predicted += len({entity[0][0] for entity in entities})
                gold += sum(map(len, entities))
    assert gold > predicted  # the clusters add mentions
    report = cdae({"join_substrings": False}).score(jsonl(*lines), as_json(first_mentions(lines)))
    for similarity in ("phi3", "soft"):
        assert report.metrics[f"ceaf_rme_{similarity}_p"] == 1.0
        assert report.metrics[f"ceaf_rme_{similarity}_r"] == pytest.approx(predicted / gold, abs=1e-12)
    # With the default clean-up too: scored, not refused.
    assert 0 < cdae().score(jsonl(*lines), as_json(first_mentions(lines))).metrics["ceaf_rme_soft_f1"] < 1


def chatgpt(side: str) -> bytes:
    """The published ChatGPT dev responses as FAMuS's ``chatgpt_response_to_iterx_format`` converts them."""
    path = famus("FACTSlab_FAMuS", "models", "cdae", "chatgpt", f"dev_{side}_gpt-3.5-turbo-0301_responses.jsonl")
    out: dict[str, Any] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        try:
            response = json.loads(row["response"])
        except json.JSONDecodeError:
            response = {}
        template: dict[str, Any] = {"incident_type": row["instance_id"].split("-frame-", 1)[-1]}
        for role, fillers in response.items() if isinstance(response, dict) else ():
            if fillers and isinstance(fillers, list):
                template[role] = [[filler] if isinstance(filler, str) else filler for filler in fillers]
        out[row["instance_id"]] = [template] if len(template) > 1 else []
    return as_json(out)


@pytest.mark.parametrize("side", SIDES)
def test_a_published_system_output_is_scored_against_a_coref_gold(side: str) -> None:
    plain = cdae().score(jsonl(*gold_lines(f"dev_{side}_gold_iterx.jsonl")), chatgpt(side)).metrics
    coref = cdae().score(jsonl(*coref_gold(side)), chatgpt(side)).metrics
    assert 0 < coref["ceaf_rme_phi3_f1"] <= coref["ceaf_rme_soft_f1"] < 1
    # The clusters give a predicted filler more gold mentions to match: precision can only rise.
    assert coref["ceaf_rme_phi3_p"] >= plain["ceaf_rme_phi3_p"]


def rotated(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Other answers, the same public view: each document takes the next one's templates (same docids, and the
    same roles' sizes among the documents, so the same largest role)."""
    templates = [line["templates"] for line in lines]
    return [
        {"docid": line["docid"], "templates": t} for line, t in zip(lines, templates[1:] + templates[:1], strict=True)
    ]


def test_a_submission_far_beyond_the_published_budget_is_refused_alike_whatever_the_answers() -> None:
    lines = coref_gold("source")
    docids = [line["docid"] for line in lines]
    # 16 documents with a role of 500 distinct fillers: 16 x (500 x 499 / 2 clean-up pairs + 500 x 252 mentions of
    # the published largest role) = 4,012,000 comparisons, twice the default budget.
    huge = {d: [{"incident_type": "X", "Agent": [[f"filler {i}"] for i in range(500)]}] for d in docids[:16]}
    refusals = set()
    for gold in (lines, rotated(lines)):
        scorer = cdae()
        public = scorer.public_view(scorer.parse_gold(jsonl(*gold)))
        assert public.largest_role == (252, 320)
        with pytest.raises(InvalidSubmission) as info:
            scorer.parse_submission(as_json(huge), public)
        refusals.add(tuple(problems(info.value)))
    (refusal,) = refusals
    assert refusal == (
        f'document "{docids[0]}", template 0, role "Agent": the submission would cost 4012000 string comparisons in '
        "all, the most (250750) for this role; at most 2000000 are accepted (option max_comparisons); each filler is "
        "counted against the phase's largest gold role, 252 mentions of 320 tokens",
    )
