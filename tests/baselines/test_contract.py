"""One contract over every registered baseline: declared facts, and bad inputs refused, never crashing."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baselines import Baseline, BaselineError, BaselineInputs, InvalidInputs, all_baselines, get_baseline
from scorers import scorer_names
from tests.baselines.support import EXAMPLES

SYSTEMS = all_baselines()
#: Training files that satisfy each cheap system, so that only the inputs are bad.
TRAINING = {
    "svident-detection": {"train.tsv": EXAMPLES / "svident/data/train.tsv"},
    "svident-disambiguation": {"train.tsv": EXAMPLES / "svident/data/train.tsv"},
    "scier-ere": {"train.jsonl": EXAMPLES / "scier/data/train.jsonl"},
    "scier-re": {"train.jsonl": EXAMPLES / "scier/data/train.jsonl"},
    "famus-sv": {},
    "famus-cdae": {},
}
RESOURCES = {"report-gold.jsonl": EXAMPLES / "famus/data/report-gold.jsonl"}


def _pairs(systems: list[type[Baseline]]) -> list[tuple[type[Baseline], str]]:
    return [(cls, scorer) for cls in systems for scorer in cls.scorers]


def _inputs(scorer: str, files: dict[str, bytes]) -> BaselineInputs:
    training = {name: path.read_bytes() for name, path in TRAINING[scorer].items()}
    return BaselineInputs(scorer, training, files, {name: path.read_bytes() for name, path in RESOURCES.items()})


def _run(cls: type[Baseline], inputs: BaselineInputs) -> bytes:
    return cls().run(inputs, lambda done, total: None, lambda line: None, lambda: False)


@pytest.mark.parametrize("cls", SYSTEMS, ids=[cls.name for cls in SYSTEMS])
def test_declared_facts_are_complete(cls: type[Baseline]) -> None:
    assert cls.name and cls.version and cls.title and cls.description
    assert cls.scorers and set(cls.scorers) <= set(scorer_names())
    assert get_baseline(cls.name).config == {spec.name: spec.default for spec in cls.options}
    assert json.loads(json.dumps(cls.describe()))["name"] == cls.name


@pytest.mark.parametrize(("cls", "scorer"), _pairs(SYSTEMS), ids=[f"{c.name}-{s}" for c, s in _pairs(SYSTEMS)])
def test_missing_or_undecodable_inputs_are_refused_with_a_message(cls: type[Baseline], scorer: str) -> None:
    with pytest.raises(InvalidInputs, match=r"found none"):
        _run(cls, _inputs(scorer, {}))
    with pytest.raises(InvalidInputs, match=r"is not UTF-8 text"):
        _run(cls, _inputs(scorer, {"inputs.tsv": b"\xff\xfe", "inputs.jsonl": b"\xff\xfe"}))


CHEAP = [cls for cls in SYSTEMS if not cls.wants_gpu]


@pytest.mark.parametrize(("cls", "scorer"), _pairs(CHEAP), ids=[f"{c.name}-{s}" for c, s in _pairs(CHEAP)])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=200),
        st.lists(
            st.sampled_from(
                [
                    b"sentence\tresearch_data\tuuid",
                    b"x\t\tu1",
                    b'"',
                    b'{"doc_id": "d", "sentences": [["a"]], "ner": [[[0, 0, "Task"]]]}',
                    b'{"doc_id": 1}',
                    b'{"docid": "d", "incident_type": null}',
                    b'{"instance_id": "i", "report_dict": {}, "source_dict": {"doctext": 3}}',
                    b"[]",
                    b"",
                ]
            ),
            max_size=4,
        ).map(b"\n".join),
    )
)
def test_arbitrary_inputs_give_a_submission_or_a_baseline_error(cls: type[Baseline], scorer: str, data: bytes) -> None:
    with contextlib.suppress(BaselineError):
        _run(cls, _inputs(scorer, {"inputs.tsv": data, "inputs.jsonl": data}))
