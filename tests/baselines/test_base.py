"""The baseline contract: option resolution, progress and cancellation, refusing another task's inputs."""

from __future__ import annotations

from typing import ClassVar

import pytest

from baselines import BadOptions, Baseline, BaselineInputs, Cancelled, InvalidInputs, RunContext
from scorers import OptionSpec
from tests.baselines.support import Recorder


class Counting(Baseline):
    """Counts to ``steps`` in steps of one and returns the count; not registered."""

    name = "counting"
    version = "1"
    title = "Counting"
    scorers = ("svident-detection",)
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("steps", 3, "how many units of work"),
        OptionSpec("rate", 0.5, "a float option"),
        OptionSpec("loud", False, "a bool option"),
        OptionSpec("label", "x", "a str option"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        context.start(self.config["steps"])
        for _ in range(self.config["steps"]):
            context.advance()
        context.log("counted")
        return str(context.done).encode()


def _run(baseline: Baseline, recorder: Recorder, scorer: str = "svident-detection") -> bytes:
    return baseline.run(BaselineInputs(scorer), recorder.on_progress, recorder.lines.append, recorder.should_stop)


def test_defaults_are_overlaid_with_given_options() -> None:
    assert Counting().config == {"steps": 3, "rate": 0.5, "loud": False, "label": "x"}
    # An int is accepted for a float option and stored as a float.
    assert Counting({"steps": 5, "rate": 1}).config == {"steps": 5, "rate": 1.0, "loud": False, "label": "x"}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"speed": 1}, "unknown option(s) for baseline counting: speed (known: steps, rate, loud, label)"),
        ({"steps": "3"}, "option 'steps' of baseline counting must be of type int, not str"),
        ({"steps": True}, "option 'steps' of baseline counting must be of type int, not bool"),
        ({"rate": True}, "option 'rate' of baseline counting must be of type float, not bool"),
        ({"loud": 1}, "option 'loud' of baseline counting must be of type bool, not int"),
        ({"label": 2}, "option 'label' of baseline counting must be of type str, not int"),
    ],
)
def test_bad_options_are_refused_by_name(given: dict[str, object], message: str) -> None:
    with pytest.raises(BadOptions) as caught:
        Counting(given)
    assert str(caught.value) == message


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(BadOptions, match=r"must be a mapping, not list"):
        Counting.resolve_options([("steps", 1)])  # type: ignore[arg-type]


def test_progress_runs_from_zero_to_total_and_the_log_is_passed_on() -> None:
    recorder = Recorder()
    assert _run(Counting(), recorder) == b"3"
    assert recorder.progress == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert recorder.lines == ["counted"]


def test_a_run_that_stops_early_still_reports_its_total_at_the_end() -> None:
    class Quick(Counting):
        def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
            context.start(4)
            context.advance(3)  # the last unit is bookkeeping that reports nothing
            return b"done"

    recorder = Recorder()
    assert _run(Quick(), recorder) == b"done"
    assert recorder.progress == [(0, 4), (3, 4), (4, 4)]


def test_should_stop_cancels_at_the_next_check() -> None:
    # Reports: (0, 3) then (1, 3); the check after the second report sees should_stop and raises.
    recorder = Recorder(stop_after=2)
    with pytest.raises(Cancelled):
        _run(Counting(), recorder)
    assert recorder.progress == [(0, 3), (1, 3)]
    assert recorder.lines == []


def test_a_run_cancelled_before_it_starts_does_no_work() -> None:
    recorder = Recorder(stop_after=0)
    with pytest.raises(Cancelled):
        _run(Counting(), recorder)
    assert recorder.progress == []


def test_inputs_of_another_scorer_are_refused() -> None:
    with pytest.raises(InvalidInputs, match=r"baseline counting writes submissions for svident-detection, not for"):
        _run(Counting(), Recorder(), scorer="famus-sv")


def test_describe_lists_what_a_page_shows() -> None:
    described = Counting.describe()
    assert described["name"] == "counting"
    assert described["scorers"] == ["svident-detection"]
    assert described["wants_gpu"] is False
    assert described["options"][0] == {"name": "steps", "default": 3, "meaning": "how many units of work"}
