"""A baseline system for the application's tests, writing the labels scorer's format (``labels_scorer.py``).

``test-labels-copy`` answers each id of the phase's ``inputs.txt`` with its label in the task's
``train.json``; on the builders' competition (training file = gold) it scores accuracy 1. Its
options make it refuse its inputs, crash, write a file the scorer refuses, or take ``steps`` slow
steps first (checking for a cancel after each), so that a test can watch and stop a running run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

from baselines import Baseline, BaselineInputs, InvalidInputs, RunContext, register, unregister
from scorers.base import OptionSpec
from tests.app.labels_scorer import NAME as LABELS

NAME = "test-labels-copy"
#: Shown in the run's log by every run, so tests can find a line of it.
FIRST_LINE = "copying the training labels"
REFUSAL = "train.json: line 2: expected a label, found nothing"


class LabelsCopy(Baseline):
    name = NAME
    version = "2"
    title = "Copy the training labels"
    description = "Answers each input id with its training label (tests only)."
    scorers = (LABELS,)
    options = (
        OptionSpec("refuse", False, "raise InvalidInputs as a system does on unusable data"),
        OptionSpec("crash", False, "raise an unexpected error"),
        OptionSpec("invalid", False, "write a file the scorer refuses"),
        OptionSpec("steps", 0, "slow steps (10 ms each) before answering"),
    )

    def produce(self, inputs: BaselineInputs, context: RunContext) -> bytes:
        if self.config["refuse"]:
            raise InvalidInputs(REFUSAL)
        if self.config["crash"]:
            raise RuntimeError("the system exploded")
        training = json.loads(inputs.training["train.json"])
        ids = inputs.inputs["inputs.txt"].decode().split()
        steps = self.config["steps"]
        context.start(steps + len(ids))
        context.log(FIRST_LINE)
        context.log(f"resources: {', '.join(sorted(inputs.resources))}")
        for step in range(steps):
            time.sleep(0.01)  # a slow system, so that a test can see it running
            if step % 10 == 0:
                context.log(f"step {step}")
            context.advance()
        answer = {"zzz": "x"} if self.config["invalid"] else {key: training[key] for key in ids}
        context.advance(len(ids))
        return json.dumps(answer).encode()


@contextmanager
def registered() -> Iterator[type[LabelsCopy]]:
    """The test system in the baseline registry while the block runs."""
    register(LabelsCopy)
    try:
        yield LabelsCopy
    finally:
        unregister(NAME)


UNINSTALLED = "test-labels-uninstalled"
#: A module that no installation has: the system that needs it can never run.
NO_SUCH_MODULE = "podium_test_module_that_is_not_installed"


class LabelsUninstalled(LabelsCopy):
    """The same system, needing a module that is not installed (as MiniLM needs torch on the serve tier)."""

    name = UNINSTALLED
    title = "Copy the training labels with a library that is missing"
    requires = (NO_SUCH_MODULE, "json")
    extra = "baselines"


@contextmanager
def uninstalled() -> Iterator[type[LabelsUninstalled]]:
    """The system whose module is missing, in the registry while the block runs."""
    register(LabelsUninstalled)
    try:
        yield LabelsUninstalled
    finally:
        unregister(UNINSTALLED)
