"""The ``classification`` scorer: scikit-learn's numbers, grouping, file layouts, refusals, and SV-Ident detection
expressed as a configuration."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

from scorers import InvalidGold, InvalidSubmission, OptionsError, ValidationError, get_scorer
from scorers.generic.classification import OTHER
from tests.conftest import shared_dir

CONFORMANCE = shared_dir() / "conformance"
#: svident-detection as a configuration of the generic scorer.
SVIDENT = {
    "format": "tsv",
    "id_column": "uuid",
    "label_column": "is_variable",
    "group_by": ["lang", "doc_id"],
    "labels": ["0", "1"],
}


def tsv(rows: list[tuple[str, ...]], header: tuple[str, ...] = ("id", "label")) -> bytes:
    return "".join("\t".join(row) + "\n" for row in [header, *rows]).encode()


def classify(gold: bytes, submission: bytes, **options: Any) -> Any:
    return get_scorer("classification", options).score(gold, submission)


@st.composite
def labelled(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    alphabet = st.sampled_from(["a", "b", "c", "d"])
    gold = draw(st.lists(alphabet, min_size=1, max_size=30))
    predicted = draw(st.lists(alphabet, min_size=len(gold), max_size=len(gold)))
    return gold, predicted


@settings(max_examples=200, deadline=None)
@given(labelled(), st.sampled_from(["macro", "micro", "weighted", "binary"]), st.sampled_from([0, 1]))
def test_numbers_are_scikit_learns(case: tuple[list[str], list[str]], average: str, zero_division: int) -> None:
    gold, predicted = case
    ids = [f"i{n}" for n in range(len(gold))]
    options: dict[str, Any] = {"average": average, "zero_division": zero_division}
    if average == "binary":
        options["positive_label"] = "a"
    report = classify(
        tsv(list(zip(ids, gold, strict=True))), json.dumps(dict(zip(ids, predicted, strict=True))).encode(), **options
    )
    labels = sorted(set(gold) | set(predicted))
    if average == "binary":
        # The positive label's own numbers (scikit-learn's 'binary' on two labels; it refuses more than two).
        expected = precision_recall_fscore_support(
            gold, predicted, labels=["a"], average=None, zero_division=zero_division
        )
        p, r, f = (float(v[0]) for v in expected[:3])
    else:
        p, r, f, _ = precision_recall_fscore_support(gold, predicted, average=average, zero_division=zero_division)
    assert report.metrics == pytest.approx(
        {"accuracy": accuracy_score(gold, predicted), "precision": p, "recall": r, "f1": f}, abs=1e-12
    )
    per_class = precision_recall_fscore_support(
        gold, predicted, labels=labels, average=None, zero_division=zero_division
    )
    for i, label in enumerate(labels):
        if label in gold:
            row = report.breakdown["class"][label]
            assert [row["precision"], row["recall"], row["f1"], row["support"]] == pytest.approx(
                [float(per_class[k][i]) for k in range(4)], abs=1e-12
            )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one label only: scikit-learn asks for the label list we give
        matrix = confusion_matrix(gold, predicted, labels=labels)
    expected_confusion: dict[str, dict[str, float]] = {}
    for i, label in enumerate(labels):
        for j, other in enumerate(labels):
            if label in gold and matrix[i][j]:
                row = expected_confusion.setdefault(label, {})
                key = other if other in gold else OTHER
                row[key] = row.get(key, 0) + float(matrix[i][j])
    assert report.breakdown["confusion"] == expected_confusion


def test_groups_are_scored_then_averaged_level_by_level() -> None:
    header = ("id", "label", "lang", "doc")
    gold = tsv(
        [
            ("1", "x", "en", "d1"),
            ("2", "y", "en", "d1"),
            ("3", "x", "en", "d2"),
            ("4", "x", "de", "d3"),
        ],
        header,
    )
    submission = tsv([("1", "x"), ("2", "x"), ("3", "x"), ("4", "y")])
    report = classify(gold, submission, group_by=["lang", "doc"], average="micro")
    # Accuracy per group: en/d1 1/2, en/d2 1, de/d3 0 -> en 3/4, de 0 -> overall 3/8 (not 2/4 over items).
    assert report.metrics["accuracy"] == pytest.approx(3 / 8, abs=1e-15)
    assert report.breakdown["lang"] == {
        "de": pytest.approx(dict.fromkeys(["accuracy", "precision", "recall", "f1"], 0.0)),
        "en": pytest.approx(dict.fromkeys(["accuracy", "precision", "recall", "f1"], 0.75)),
    }
    assert set(report.breakdown["group"]) == {'["en", "d1"]', '["en", "d2"]', '["de", "d3"]'}
    assert set(report.units) == set(report.breakdown["group"])
    # A subset of groups aggregates as the whole would on those groups.
    scorer = get_scorer("classification", {"group_by": ["lang", "doc"], "average": "micro"})
    parsed_gold = scorer.parse_gold(gold)
    parsed = scorer.parse_submission(submission, scorer.public_view(parsed_gold))
    assert scorer.compute(parsed_gold, parsed, units=['["en", "d1"]', '["de", "d3"]']).metrics["accuracy"] == 0.25


def test_the_file_layouts() -> None:
    reference = classify(tsv([("1", "x"), ("2", "y")]), tsv([("1", "x"), ("2", "x")])).metrics
    gold_csv = b'\xef\xbb\xbfname,kind,note\n1,x,"a, quoted"\n2,y,\n'
    options = {"format": "csv", "id_column": "name", "label_column": "kind"}
    for submission in [
        b"name,kind\n1,x\n2,x\n",
        b'{"1": "x", "2": "x"}',
        b'{"2": "x", "1": "x"}\n',
    ]:
        assert classify(gold_csv, submission, **options).metrics == reference
    gold_jsonl = b'{"id": 1, "label": "x"}\n\n{"id": 2, "label": "y"}\r\n'
    for submission in [b'{"id": "1", "label": "x"}\n{"id": 2, "label": "x"}', b'{"1": "x", "2": "x"}']:
        assert classify(gold_jsonl, submission, format="jsonl").metrics == reference
    # Integer labels stand for their digits (SV-Ident submissions write 0/1 for "0"/"1").
    assert classify(tsv([("1", "1"), ("2", "0")]), b'{"1": 1, "2": 1}').metrics["accuracy"] == 0.5


def refusal(gold: bytes, submission: bytes, **options: Any) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        classify(gold, submission, **options)
    return [str(p) for p in caught.value.problems]


def test_missing_unknown_and_repeated_ids_and_foreign_labels_are_refused() -> None:
    gold = tsv([("1", "x"), ("2", "y")])
    assert refusal(gold, b'{"1": "x"}') == ["id '2': has no value in the submission"]
    assert refusal(gold, b'{"1": "x", "2": "y", "3": "x"}') == ["id '3': is not an id of the phase"]
    assert refusal(gold, tsv([("1", "x"), ("2", "y"), ("1", "y")])) == ["line 4: id '1' is repeated (first at line 2)"]
    assert refusal(gold, b'{"1": "x", "2": "z"}', labels=["x", "y"]) == ["id '2': label 'z' is not one of ['x', 'y']"]
    assert refusal(gold, b'{"1": true, "2": null}') == [
        "key '1': label true is not a label (a non-empty string)",
        "key '2': label null is not a label (a non-empty string)",
    ]
    assert refusal(gold, b'{"1": "x", "1": "y", "2": "y"}') == ["key '1' appears more than once in one object"]
    with pytest.raises(InvalidGold):
        classify(tsv([("1", "x"), ("2", "maybe")]), b'{"1": "x", "2": "y"}', labels=["x", "y"])
    with pytest.raises(InvalidSubmission, match="a submission is a TSV file with a header row, or a JSON object"):
        classify(gold, b'["x", "y"]')


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"format": "xlsx"}, "must be one of tsv, csv, jsonl"),
        ({"average": "samples"}, "must be one of macro, weighted, micro, binary"),
        ({"average": "binary"}, "'positive_label' of classification is needed"),
        ({"zero_division": 0.5}, "must be of type int"),
        ({"zero_division": 2}, "must be one of 0, 1"),
        ({"primary_metric": "mcc"}, "must be one of accuracy, precision, recall, f1"),
        ({"group_by": ["lang", "lang"]}, "distinct column names"),
        ({"labels": []}, "null or a list of distinct labels"),
        ({"id_column": ""}, "must name a column"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionsError) as caught:
        get_scorer("classification", options)
    assert message in str(caught.value)


def _file(case: Path, stem: str) -> bytes:
    (path,) = [p for p in case.iterdir() if p.stem == stem]
    return path.read_bytes()


def _cases(*parts: str) -> list[Path]:
    folder = CONFORMANCE.joinpath(*parts)
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


needs_conformance = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason=f"no conformance cases at {CONFORMANCE}")


@needs_conformance
@pytest.mark.parametrize("case", _cases("svident-detection"), ids=lambda p: p.name)
def test_svident_detection_as_a_configuration_gives_the_same_numbers(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())["metrics"]
    gold, submission = _file(case, "gold"), _file(case, "submission")
    generic = classify(gold, submission, **SVIDENT)
    seed = get_scorer("svident-detection").score(gold, submission)
    for name, value in expected.items():
        assert generic.metrics[name] == pytest.approx(value, abs=1e-9, rel=0), name
        assert generic.metrics[name] == pytest.approx(seed.metrics[name], abs=1e-12, rel=0), name
    # The per-language table (the paper's) and the per-document one agree as well.
    assert set(generic.breakdown["lang"]) == set(seed.breakdown["language"])
    for lang, values in seed.breakdown["language"].items():
        assert values == pytest.approx({m: generic.breakdown["lang"][lang][m] for m in values}, abs=1e-12)
    assert len(generic.breakdown["group"]) == len(seed.breakdown["document"])


@needs_conformance
@pytest.mark.parametrize("case", _cases("invalid", "svident-detection"), ids=lambda p: p.name)
def test_svident_detection_refusals_are_refusals_of_the_configuration_too(case: Path) -> None:
    with pytest.raises(InvalidSubmission):
        classify(_file(case, "gold"), _file(case, "submission"), **SVIDENT)
