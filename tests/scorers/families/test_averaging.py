"""Hierarchical plain means: groups of a level weigh equally, whatever their size."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorers.families.averaging import nested_mean


def record(language: str, domain: str, f1: float) -> dict[str, object]:
    return {"language": language, "domain": domain, "f1": f1}


RECORDS = [record("en", "a", 1.0), record("en", "a", 0.0), record("en", "b", 0.0), record("de", "a", 1.0)]


def test_mean_over_languages_of_means_over_their_groups() -> None:
    # en: (1 + 0 + 0) / 3 = 1/3; de: 1; overall (1/3 + 1) / 2 = 2/3.
    assert nested_mean(RECORDS, ["f1"], ["language"]) == pytest.approx({"f1": 2 / 3}, abs=1e-15)


def test_plain_mean_without_levels() -> None:
    # (1 + 0 + 0 + 1) / 4 = 1/2.
    assert nested_mean(RECORDS, ["f1"], []) == {"f1": 0.5}


def test_two_levels() -> None:
    # en/a: (1 + 0) / 2 = 1/2, en/b: 0 -> en 1/4; de/a: 1 -> de 1; overall (1/4 + 1) / 2 = 5/8.
    assert nested_mean(RECORDS, ["f1"], ["language", "domain"]) == {"f1": 5 / 8}


def test_repeated_records_count_as_often_as_they_occur() -> None:
    # A bootstrap resample: en twice at 1 and once at 0 -> 2/3; de 1 -> (2/3 + 1) / 2 = 5/6.
    resample = [RECORDS[0], RECORDS[0], RECORDS[1], RECORDS[3]]
    assert nested_mean(resample, ["f1"], ["language"]) == pytest.approx({"f1": 5 / 6}, abs=1e-15)


def test_no_records_score_zero() -> None:
    assert nested_mean([], ["precision", "f1"], ["language"]) == {"precision": 0.0, "f1": 0.0}


@given(
    st.lists(
        st.tuples(st.sampled_from(["en", "de", "fr"]), st.floats(min_value=0, max_value=1)), min_size=1, max_size=30
    ),
    st.randoms(use_true_random=False),
)
def test_order_of_records_never_changes_a_bit(values: list[tuple[str, float]], rng: random.Random) -> None:
    records = [record(lang, "a", f1) for lang, f1 in values]
    shuffled = list(records)
    rng.shuffle(shuffled)
    for levels in ([], ["language"]):
        assert nested_mean(shuffled, ["f1"], levels) == nested_mean(records, ["f1"], levels)
