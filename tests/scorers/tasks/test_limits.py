"""Size-limit options: declared from a dataclass, read back from settings, checked, and worded alike."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from scorers import OptionsError, get_scorer, scorer_class
from scorers.base import OptionSpec
from scorers.tasks.limits import PREFIX, SizeLimits, bound, check_limit


@dataclass(frozen=True)
class Sample(SizeLimits):
    rows: int = bound(10, "rows accepted in one list")
    chars: int = bound(3, "characters accepted in one label")


def test_each_field_is_an_option_named_max() -> None:
    assert Sample.options() == (
        OptionSpec("max_rows", 10, "rows accepted in one list"),
        OptionSpec("max_chars", 3, "characters accepted in one label"),
    )
    assert Sample.from_config({"max_rows": 4, "max_chars": 3, "other": True}) == Sample(rows=4, chars=3)


def test_the_message_names_count_limit_and_option() -> None:
    message = Sample(rows=4).exceeded("rows", 12, "rows")
    assert message == "12 rows; at most 4 are accepted (option max_rows)"


def test_limit_options_must_be_positive() -> None:
    assert check_limit("x", "max_rows", 1) == 1
    assert check_limit("x", "cutoffs", 0) == 0  # not a limit: left to the scorer
    with pytest.raises(OptionsError, match="'max_rows' of x must be a positive integer, not 0"):
        check_limit("x", "max_rows", 0)


#: The limits of each seed scorer; the two without any are linear in their files (see their docstrings).
SEED_LIMITS = {
    "svident-detection": [],
    "svident-disambiguation": [
        "max_candidates_per_query",
        "max_candidates",
        "max_variable_chars",
        "max_relevant_per_query",
    ],
    "scier-ere": ["max_entities_per_sentence", "max_relations_per_sentence", "max_label_chars", "max_labels"],
    "scier-re": ["max_entities_per_sentence", "max_relations_per_sentence", "max_label_chars", "max_labels"],
    "famus-cdae": [
        "max_templates_per_document",
        "max_fillers_per_role",
        "max_filler_chars",
        "max_gold_mentions_per_role",
        "max_gold_tokens_per_role",
        "max_comparisons",
        "max_token_pairs",
    ],
    "famus-sv": [],
}


@pytest.mark.parametrize(("name", "expected"), SEED_LIMITS.items())
def test_every_limit_of_a_seed_scorer_is_a_checked_positive_option(name: str, expected: list[str]) -> None:
    limits = [spec for spec in scorer_class(name).options if spec.name.startswith(PREFIX)]
    assert [spec.name for spec in limits] == expected
    for spec in limits:
        assert type(spec.default) is int and spec.default > 0
        assert get_scorer(name).config[spec.name] == spec.default
        assert get_scorer(name, {spec.name: 1}).config[spec.name] == 1
        with pytest.raises(OptionsError, match="must be a positive integer"):
            get_scorer(name, {spec.name: 0})
        with pytest.raises(OptionsError, match="must be of type int"):
            get_scorer(name, {spec.name: True})
        with pytest.raises(OptionsError, match="must be of type int"):
            get_scorer(name, {spec.name: 2.5})
