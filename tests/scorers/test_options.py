"""The option checking that scorers and baseline systems share (``scorers.options``) and their one registry class."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from baselines import BadOptions, get_baseline
from scorers import OptionsError, UnknownScorer, get_scorer
from scorers.options import OptionSpec, check_type, resolve
from scorers.registry import Registry

SPECS = (
    OptionSpec("flag", False, "a switch"),
    OptionSpec("count", 3, "a whole number"),
    OptionSpec("rate", 0.5, "a fraction"),
    OptionSpec("labels", [], "some names"),
    OptionSpec("name", "x", "a text"),
    OptionSpec("anything", None, "no type"),
)


def checked(given: dict[str, Any]) -> dict[str, Any]:
    specs = {spec.name: spec for spec in SPECS}
    return resolve(
        SPECS,
        given,
        owner="thing",
        error=ValueError,
        check=lambda name, value: check_type(specs[name], value, owner="thing", error=ValueError),
    )


def test_defaults_overlaid_and_values_normalised() -> None:
    assert checked({}) == {"flag": False, "count": 3, "rate": 0.5, "labels": [], "name": "x", "anything": None}
    got = checked({"rate": 1, "labels": ("a", "b"), "anything": {"k": 1}})
    assert (got["rate"], type(got["rate"]), got["labels"], got["anything"]) == (1.0, float, ["a", "b"], {"k": 1})


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"flag": 1}, "option 'flag' of thing must be of type bool, not int"),
        ({"count": True}, "option 'count' of thing must be of type int, not bool"),
        ({"count": 2.0}, "option 'count' of thing must be of type int, not float"),
        ({"rate": False}, "option 'rate' of thing must be of type float, not bool"),
        ({"labels": "a"}, "option 'labels' of thing must be of type list, not str"),
        ({"name": 2}, "option 'name' of thing must be of type str, not int"),
        ({"speed": 1}, "unknown option(s) for thing: speed (known: flag, count, rate, labels, name, anything)"),
    ],
)
def test_wrong_names_and_types_are_refused_by_name(given: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        checked(given)
    assert str(caught.value) == message


def test_scorers_and_baselines_word_their_refusals_alike() -> None:
    with pytest.raises(OptionsError, match=r"^options for famus-cdae must be a mapping, not list$"):
        get_scorer("famus-cdae", [("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(BadOptions, match=r"^options for baseline svident-tfidf-lr must be a mapping, not list$"):
        get_baseline("svident-tfidf-lr", [("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match=r"^option 'max_comparisons' of famus-cdae must be of type int, not str$"):
        get_scorer("famus-cdae", {"max_comparisons": "9"})
    with pytest.raises(BadOptions, match=r"^option 'c' of baseline svident-tfidf-lr must be of type float, not str$"):
        get_baseline("svident-tfidf-lr", {"c": "1"})


class One:
    name: ClassVar[str] = "one"


class OtherOne:
    name: ClassVar[str] = "one"


def test_the_registry_keys_classes_by_name_and_names_the_known_ones() -> None:
    registry: Registry[Any] = Registry("widget", UnknownScorer)
    assert registry.register(One) is One
    registry.register(One)  # the same class again is fine
    with pytest.raises(ValueError, match="a widget named 'one' is already registered"):
        registry.register(OtherOne)
    assert (registry.get("one"), registry.names(), registry.all()) == (One, ["one"], [One])
    with pytest.raises(UnknownScorer, match=r"^unknown widget 'two'; known widgets: one$"):
        registry.get("two")
    registry.unregister("one")
    assert registry.names() == []
