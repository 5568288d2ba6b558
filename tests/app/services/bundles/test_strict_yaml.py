"""Bundle YAML nested too deeply is refused at its key path while it is read, by the strict loader and by the
plain reader of CodaLab bundles alike, before PyYAML's recursion can fail."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.services.bundles.loader import load_bundle
from app.services.bundles.spec import BundleError
from app.services.bundles.strict_yaml import load_strict
from codalab.bounded_yaml import MAX_YAML_DEPTH, NestedTooDeep, load_bounded
from codalab.bundle import CodalabError, read_yaml


def flow_lists(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_lists(depth: int) -> Any:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("load", [load_strict, load_bounded], ids=["strict", "plain"])
def test_the_deepest_nesting_accepted_loads_and_one_more_is_refused_at_its_key_path(load: Any) -> None:
    # The document's mapping and the one under "a" are two levels; the lists make up the rest.
    accepted = MAX_YAML_DEPTH - 2
    assert load(f"a:\n  b: {flow_lists(accepted)}\n") == {"a": {"b": nested_lists(accepted)}}
    with pytest.raises(NestedTooDeep) as caught:
        load(f"a:\n  b: {flow_lists(accepted + 1)}\n")
    assert caught.value.path == "a.b" + "[0]" * accepted
    assert caught.value.reason == f"nested deeper than {MAX_YAML_DEPTH} levels"
    assert caught.value.where == f"line 2, column {6 + accepted}"  # the "[" of the list one level too deep


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("\n".join(" " * i + f"k{i}:" for i in range(1000)), ".".join(f"k{i}" for i in range(MAX_YAML_DEPTH))),
        ("- " * 100_000 + "x", "[0]" * MAX_YAML_DEPTH),
        ("{a: [" * 50_000 + "x" + "]}" * 50_000, ".".join(["a[0]"] * (MAX_YAML_DEPTH // 2))),
        ("k: " + "[" * 100_000, "k" + "[0]" * (MAX_YAML_DEPTH - 1)),  # never closed: refused before that is seen
    ],
    ids=["block mappings", "block lists", "flow mappings and lists", "unclosed"],
)
def test_deep_nesting_is_refused_where_it_gets_too_deep(text: str, path: str) -> None:
    with pytest.raises(NestedTooDeep) as caught:
        load_strict(text)
    assert caught.value.path == path


def test_a_long_key_is_shortened_in_the_key_path() -> None:
    with pytest.raises(NestedTooDeep) as caught:
        load_strict(f"{'k' * 1000}: {flow_lists(100_000)}")
    assert caught.value.path == "k" * 77 + "..." + "[0]" * (MAX_YAML_DEPTH - 1)


def test_a_bundle_nested_too_deeply_is_one_problem_at_its_key_path(tmp_path: Path) -> None:
    (tmp_path / "competition.yaml").write_text(f"slug: deep\ntasks:\n- scorer_options: {{x: {flow_lists(10**5)}}}\n")
    with pytest.raises(BundleError) as caught:
        load_bundle(tmp_path)
    at = 22 + MAX_YAML_DEPTH - 4
    key = "tasks[0].scorer_options.x" + "[0]" * (MAX_YAML_DEPTH - 4)
    assert caught.value.problems == [(key, f"nested deeper than {MAX_YAML_DEPTH} levels (line 3, column {at + 1})")]


def test_the_codalab_reader_refuses_it_too(tmp_path: Path) -> None:
    (tmp_path / "competition.yaml").write_text(f"phases: {flow_lists(10**5)}\n")
    with pytest.raises(CodalabError, match=rf"phases{re.escape('[0]' * (MAX_YAML_DEPTH - 1))}: nested deeper"):
        read_yaml(tmp_path / "competition.yaml")
