"""The registry of baselines, and the promise that importing ``baselines`` stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

from baselines import (
    Baseline,
    BaselineInputs,
    RunContext,
    UnknownBaseline,
    baseline_class,
    baseline_names,
    baselines_for,
    get_baseline,
    register,
    unregister,
)
from scorers import scorer_names
from tests.conftest import ROOT

SEED = {
    "famus-cdae-report": ("famus-cdae",),
    "famus-sv-lemma": ("famus-sv",),
    "scier-gazetteer": ("scier-ere", "scier-re"),
    "svident-bm25": ("svident-disambiguation",),
    "svident-minilm-dense": ("svident-disambiguation",),
    "svident-minilm-lr": ("svident-detection",),
    "svident-tfidf-lr": ("svident-detection",),
}


def test_the_seed_systems_are_registered_with_their_scorers() -> None:
    assert {name: baseline_class(name).scorers for name in baseline_names()} == SEED


#: The scorers that bundles configure (a scoring program too): their inputs are whatever a bundle publishes, so no
#: system can serve them all.
GENERIC = {"trec", "classification", "regression", "program"}


def test_every_seed_scorer_has_a_baseline_and_every_baseline_a_known_scorer() -> None:
    served = {scorer for scorers in SEED.values() for scorer in scorers}
    assert served == set(scorer_names()) - GENERIC
    assert [cls.name for cls in baselines_for("svident-detection")] == ["svident-minilm-lr", "svident-tfidf-lr"]


def test_only_the_model_systems_want_a_gpu() -> None:
    wanting = sorted(name for name in baseline_names() if baseline_class(name).wants_gpu)
    assert wanting == ["svident-minilm-dense", "svident-minilm-lr"]


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownBaseline, match=r"unknown baseline 'nope'; known baselines: famus-cdae-report, "):
        get_baseline("nope")


def test_a_second_class_under_a_taken_name_is_an_error_and_unregister_removes_a_name() -> None:
    class Extra(Baseline):
        name = "extra-test-system"
        version = "1"
        title = "Extra"
        scorers = ("famus-sv",)

        def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
            return b"{}"

    class Clash(Extra):
        pass

    register(Extra)
    try:
        assert register(Extra) is Extra  # registering the same class again is harmless
        with pytest.raises(ValueError, match=r"a baseline named 'extra-test-system' is already registered"):
            register(Clash)
        assert baselines_for("famus-sv")[0] is Extra
    finally:
        unregister("extra-test-system")
    assert "extra-test-system" not in baseline_names()


def test_importing_baselines_loads_no_model_library() -> None:
    # The web tier lists systems without the baselines extra; its libraries load when a system runs.
    code = (
        "import sys, baselines; heavy = ('torch', 'sentence_transformers', 'transformers', 'bm25s', 'simplemma'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
