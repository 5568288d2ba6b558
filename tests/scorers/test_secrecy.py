"""The secrecy rule, over every registered scorer: a refusal never depends on the answers.

Participants see every refusal and a refusal costs them nothing, so a refusal that depended on the gold's
answers would be a free question to it (SV-Ident's queries, a FAMuS role's mention count). For every
registered scorer, a generator in ``tests/scorers/secrecy`` draws two golds with the same public inputs and
different answers, and submissions of every kind; both golds must have equal public views and give every
submission the same outcome: scored, or refused with the same message, word for word, and the same problems.

The test enumerates the registry (with the application tests' scorers registered as their plugin registers
them), so a scorer without a generator fails here until it declares one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scorers import NoSample, ScorerError, ValidationError, get_scorer, register, scorer_names, unregister
from tests.app.labels_scorer import LabelScorer
from tests.app.slow_scorer import SlowScorer
from tests.scorers.secrecy import PAIRS, Pair
from tests.scorers.secrecy import famus as _famus  # noqa: F401  (each module declares its generators)
from tests.scorers.secrecy import generic as _generic  # noqa: F401
from tests.scorers.secrecy import labels as _labels  # noqa: F401
from tests.scorers.secrecy import program as _program  # noqa: F401
from tests.scorers.secrecy import scier as _scier  # noqa: F401
from tests.scorers.secrecy import svident as _svident  # noqa: F401

APP_TEST_SCORERS = (LabelScorer, SlowScorer)
SCORERS = sorted(set(scorer_names()) | {cls.name for cls in APP_TEST_SCORERS})


@pytest.fixture(scope="module", autouse=True)
def app_test_scorers() -> Iterator[None]:
    """The application tests' scorers, registered as their plugin (``tests/app/plugins/labels.py``) does."""
    added = [cls for cls in APP_TEST_SCORERS if cls.name not in scorer_names()]
    for cls in added:
        register(cls)
    yield
    for cls in added:
        unregister(cls.name)


def outcome(name: str, options: dict[str, Any], gold: bytes, submission: bytes) -> tuple[Any, ...]:
    """What a participant learns from an upload: that it was scored, or the refusal's every word."""
    try:
        get_scorer(name, options).score(gold, submission)
    except ValidationError as exc:
        return ("refused", type(exc).__name__, str(exc), exc.to_dict())
    return ("scored",)


@pytest.mark.parametrize("name", SCORERS)
def test_every_registered_scorer_declares_a_gold_pair_generator(name: str) -> None:
    assert name in PAIRS, (
        f"scorer {name!r} has no gold-pair generator: add one to tests/scorers/secrecy (see its __init__.py) "
        "so that the secrecy test covers it"
    )


@pytest.mark.parametrize("name", SCORERS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_golds_with_the_same_public_inputs_give_the_same_outcome_and_message(name: str, data: st.DataObject) -> None:
    if name not in PAIRS:
        pytest.skip("no generator (the test above fails for it)")
    pair: Pair = data.draw(PAIRS[name](), label="pair")
    scorer = get_scorer(name, pair.options)
    try:
        gold_a, gold_b = scorer.parse_gold(pair.gold_a), scorer.parse_gold(pair.gold_b)
    except ScorerError as exc:  # pragma: no cover - a generator's mistake, not the scorer's
        pytest.fail(f"the generator of {name} drew a gold its scorer refuses: {exc}")
    assume(gold_a != gold_b)  # the answers differ
    assert scorer.public_view(gold_a) == scorer.public_view(gold_b)
    seen = set()
    for submission in pair.submissions:
        first = outcome(name, pair.options, pair.gold_a, submission)
        assert outcome(name, pair.options, pair.gold_b, submission) == first, submission[:300]
        seen.add(first[0])
    assert seen == {"scored", "refused"}  # the generator reaches both outcomes
    # The sample submission is built from the public view: the same bytes for both golds, the same outcome.
    sample = sample_of(scorer, gold_a)
    assert sample == sample_of(scorer, gold_b)
    if isinstance(sample, bytes):
        assert outcome(name, pair.options, pair.gold_a, sample) == outcome(name, pair.options, pair.gold_b, sample)
    # What the phase's page says with the format (a CDAE phase's largest gold role): the same words for both golds.
    assert scorer.format_notes(scorer.public_view(gold_a)) == scorer.format_notes(scorer.public_view(gold_b))


def sample_of(scorer: Any, gold: Any) -> bytes | str:
    """The scorer's sample submission for ``gold``'s public view, or the words of its refusal to build one."""
    try:
        return bytes(scorer.sample_submission(scorer.public_view(gold)))
    except NoSample as exc:
        return str(exc)
