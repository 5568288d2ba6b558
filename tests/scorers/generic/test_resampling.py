"""The resampling hooks of the generic scorers: a row of unit counts gives what ``aggregate`` gives on the units
repeated that many times (NaN only for no unit at all), and grouped averages resample within their parts."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np
import pytest

from scorers import Scorer, ScoreReport, get_scorer
from tests.conftest import require_shared


def check_weighted(scorer: Scorer[Any, Any, Any], report: ScoreReport, vectorized: set[str]) -> None:
    rng = np.random.default_rng(5)
    ids = sorted(report.units)
    stats = [report.units[i] for i in ids]
    counts = np.vstack([np.ones(len(ids)), np.zeros(len(ids)), rng.integers(0, 3, (6, len(ids)))]).astype(float)
    for name in report.metrics:
        metric = scorer.weighted_metric(stats, name)
        if name not in vectorized:
            assert metric is None, name
            continue
        assert metric is not None, name
        for row, value in zip(counts, metric(counts), strict=True):
            repeated = [s for s, c in zip(stats, row, strict=True) for _ in range(int(c))]
            if not repeated:
                assert math.isnan(value) or value == 0.0, name
            else:
                assert value == pytest.approx(scorer.aggregate(repeated)[name], abs=1e-12), name


@pytest.mark.parametrize(
    "options",
    [{}, {"complete_queries": True}, {"complete_queries": True, "max_docs_per_query": 50, "relevance_level": 2}],
)
def test_trec_measures_are_vectorized(options: dict[str, Any]) -> None:
    reference = require_shared("reference", "trec_eval")
    measures = ["map", "gm_map", "num_q", "num_rel", "num_ret", "P_10", "utility", "recip_rank"]
    scorer = get_scorer("trec", {"measures": measures, **options})
    report = scorer.score((reference / "qrels.test").read_bytes(), (reference / "results.trunc").read_bytes())
    check_weighted(scorer, report, set(measures))
    assert {scorer.stratum(unit) for unit in report.units.values()} == {None}


def _items(n: int, seed: int) -> tuple[bytes, bytes, bytes]:
    rng = random.Random(seed)
    rows = [(f"i{k}", rng.choice("abc"), rng.choice(["en", "de"]), f"d{rng.randint(1, 4)}") for k in range(n)]
    gold = "id\tlabel\tlang\tdoc\n" + "".join(f"{i}\t{label}\t{lang}\t{doc}\n" for i, label, lang, doc in rows)
    guesses = {i: label if rng.random() < 0.6 else rng.choice("abcd") for i, label, _, _ in rows}
    values = "id\tvalue\tlang\tdoc\n" + "".join(
        f"{i}\t{rng.uniform(0, 5):.2f}\t{lang}\t{doc}\n" for i, _, lang, doc in rows
    )
    return gold.encode(), json.dumps(guesses).encode(), values.encode()


@pytest.mark.parametrize("average", ["macro", "micro", "weighted", "binary"])
@pytest.mark.parametrize("zero_division", [0, 1])
def test_classification_over_items_is_vectorized(average: str, zero_division: int) -> None:
    gold, submission, _ = _items(40, 1)
    options = {"average": average, "zero_division": zero_division, "positive_label": "b"}
    scorer = get_scorer("classification", options)
    report = scorer.score(gold, submission)
    check_weighted(scorer, report, set(report.metrics))
    assert {scorer.stratum(unit) for unit in report.units.values()} == {None}


def test_grouped_scorers_average_parts_and_resample_within_them() -> None:
    gold, submission, values = _items(60, 2)
    classifier = get_scorer("classification", {"group_by": ["lang", "doc"]})
    report = classifier.score(gold, submission)
    check_weighted(classifier, report, set(report.metrics))
    assert {classifier.stratum(unit) for unit in report.units.values()} == {"en", "de"}
    regressor = get_scorer("regression", {"group_by": ["lang", "doc"]})
    guesses = {line.split("\t")[0]: 2.0 + 0.1 * n for n, line in enumerate(values.decode().splitlines()[1:])}
    grouped = regressor.score(values, json.dumps(guesses).encode())
    check_weighted(regressor, grouped, set(grouped.metrics))
    # Over items, regression's rank correlations have no sums to weight: the leaderboard loops over resamples.
    plain = get_scorer("regression")
    check_weighted(plain, plain.score(values, json.dumps(guesses).encode()), set())
