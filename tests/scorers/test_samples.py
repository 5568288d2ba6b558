"""Every registered scorer builds a sample submission from a phase's public view alone, and it is accepted and
scored; every scorer's breakdown holds the per-document rows its description names (``per_unit_breakdown``).

The scorers are taken from the registry and their data from the example bundles, so a new scorer fails here
until it has an example competition (and builds a sample, or says why it cannot)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from scorers import NoSample, PublicIds, Scorer, UnitStats, get_scorer, scorer_names
from tests.scorers.examples import example_phases

EXAMPLES = example_phases()


@pytest.mark.parametrize("name", scorer_names())
def test_every_registered_scorer_has_an_example_phase(name: str) -> None:
    assert name in EXAMPLES, f"scorer {name!r} is used by no bundle of examples/: add an example competition"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_sample_from_the_public_view_is_accepted_and_scored(name: str) -> None:
    example = EXAMPLES[name]
    scorer = get_scorer(name, example.options)
    gold = scorer.parse_gold(example.gold)
    public = scorer.public_view(gold)
    if scorer.raw_submission:  # a scoring program's results are files only it knows: it says so
        with pytest.raises(NoSample, match="only the competition's scoring program knows"):
            scorer.sample_submission(public)
        return
    sample = scorer.sample_submission(public)
    assert sample == scorer.sample_submission(scorer.public_view(scorer.parse_gold(example.gold)))  # deterministic
    report = scorer.score(example.gold, sample)  # parsed as an upload is, against the public view
    primary = report.metrics[scorer.primary_metric]
    assert 0.0 <= primary <= 1.0 or not scorer.higher_is_better
    assert primary < 1.0 or not scorer.higher_is_better  # a neutral answer everywhere is not a perfect one


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_breakdown_holds_the_per_document_rows_the_description_names(name: str) -> None:
    example = EXAMPLES[name]
    scorer = get_scorer(name, example.options)
    dimension = scorer.described().per_unit_breakdown
    if scorer.raw_submission:  # a scoring program scores a submission as a whole: no per-document rows
        assert dimension is None
        return
    assert dimension is not None
    report = scorer.score(example.gold, scorer.sample_submission(scorer.public_view(scorer.parse_gold(example.gold))))
    rows = report.breakdown.get(dimension)
    assert rows, f"{name}: no {dimension!r} rows in the breakdown (it has {sorted(report.breakdown)})"
    assert all(scorer.primary_metric in values for values in rows.values())


@pytest.mark.parametrize("name", ["trec", "classification", "regression"])
def test_options_that_write_no_per_document_rows_describe_none(name: str) -> None:
    # trec without per_query, the keyed scorers without group_by (a row per item would tell its answer)
    example = EXAMPLES[name]
    scorer = get_scorer(name, {k: v for k, v in example.options.items() if k not in ("per_query", "group_by")})
    assert scorer.described().per_unit_breakdown is None
    report = scorer.score(example.gold, scorer.sample_submission(scorer.public_view(scorer.parse_gold(example.gold))))
    assert not {"query", "group"} & set(report.breakdown)


class _Unsampled(Scorer[Any, PublicIds, Any]):
    name = "unsampled"
    version = "1"
    title = "A scorer without a sample"
    primary_metric = "m"
    metrics = ()
    gold_format = submission_format = "anything"

    def parse_gold(self, data: bytes) -> Any:
        return data

    def public_view(self, gold: Any) -> PublicIds:
        return PublicIds.of([])

    def parse_submission(self, data: bytes, public: PublicIds) -> Any:
        return data

    def unit_stats(self, gold: Any, submission: Any) -> dict[str, UnitStats]:
        return {}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return {}


def test_a_scorer_that_cannot_build_a_sample_says_so() -> None:
    with pytest.raises(NoSample, match="the scorer unsampled cannot build a sample submission"):
        _Unsampled().sample_submission(PublicIds.of(["a"]))
