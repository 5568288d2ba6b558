"""The ``regression`` scorer: scipy's correlations (without importing scipy.stats) and scikit-learn's errors and R²,
grouping, refusals."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import mean_absolute_error, r2_score, root_mean_squared_error

from scorers import InvalidSubmission, OptionsError, get_scorer
from scorers.families import regression, regression_plain
from scorers.families.regression import scores
from scorers.families.regression_plain import PLAIN_MAX
from tests.conftest import podium_probe

ROOT = Path(__file__).resolve().parents[3]


def tsv(rows: list[tuple[str, ...]], header: tuple[str, ...] = ("id", "value")) -> bytes:
    return "".join("\t".join(row) + "\n" for row in [header, *rows]).encode()


def regress(gold: bytes, submission: bytes, **options: Any) -> Any:
    return get_scorer("regression", options).score(gold, submission)


values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=2, max_size=40))
def test_numbers_are_scipys_and_scikit_learns(pairs: list[tuple[float, float]]) -> None:
    gold = [g for g, _ in pairs]
    predicted = [p for _, p in pairs]
    ids = [f"i{n}" for n in range(len(pairs))]
    report = regress(
        tsv([(i, repr(g)) for i, g in zip(ids, gold, strict=True)]),
        json.dumps(dict(zip(ids, predicted, strict=True))).encode(),
    )
    constant = len(set(gold)) == 1 or len(set(predicted)) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow, constant input: the cases the scorer settles itself
        expected = {
            "mae": mean_absolute_error(gold, predicted),
            "rmse": root_mean_squared_error(gold, predicted),
            "r2": max(r2_score(gold, predicted), -sys.float_info.max),
        }
        expected["pearson"] = 0.0 if constant else stats.pearsonr(gold, predicted).statistic
        expected["spearman"] = 0.0 if constant else stats.spearmanr(gold, predicted).statistic
        expected["kendall"] = 0.0 if constant else stats.kendalltau(gold, predicted).statistic
    for name, value in expected.items():
        assert report.metrics[name] == pytest.approx(value, rel=1e-9, abs=1e-9), name


def test_undefined_correlations_are_zero_and_r2_follows_scikit_learn() -> None:
    assert scores([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])["pearson"] == 0.0
    assert scores([1.0], [2.0]) == {"pearson": 0.0, "spearman": 0.0, "kendall": 0.0, "mae": 1.0, "rmse": 1.0, "r2": 0.0}
    assert scores([2.0, 2.0], [2.0, 2.0])["r2"] == 1.0
    assert scores([], []) == dict.fromkeys(["pearson", "spearman", "kendall", "mae", "rmse", "r2"], 0.0)


def test_groups_are_scored_then_averaged() -> None:
    gold = tsv(
        [("a", "1", "x"), ("b", "2", "x"), ("c", "3", "x"), ("d", "1", "y"), ("e", "5", "y")], ("id", "value", "topic")
    )
    submission = tsv([("a", "1"), ("b", "2"), ("c", "4"), ("d", "2"), ("e", "1")])
    report = regress(gold, submission, group_by=["topic"], primary_metric="mae")
    x, y = scores([1, 2, 3], [1, 2, 4]), scores([1, 5], [2, 1])
    assert report.metrics == pytest.approx({m: (x[m] + y[m]) / 2 for m in x}, abs=1e-12)
    assert report.breakdown["topic"]["y"]["mae"] == pytest.approx(2.5)
    assert set(report.units) == {"x", "y"}


def test_the_primary_metric_and_its_direction_are_options() -> None:
    assert get_scorer("regression", {"primary_metric": "rmse"}).config["primary_metric"] == "rmse"
    specs = {m.name: m.higher_is_better for m in get_scorer("regression").metrics}
    assert specs["rmse"] is False and specs["mae"] is False and specs["pearson"] is True
    with pytest.raises(OptionsError, match="must be one of pearson"):
        get_scorer("regression", {"primary_metric": "mse"})
    with pytest.raises(OptionsError, match="null, true or false"):
        get_scorer("regression", {"higher_is_better": "down"})


@pytest.mark.parametrize(
    ("submission", "problem"),
    [
        (b'{"a": NaN, "b": 1}', "NaN is not a JSON number"),
        (b'{"a": 1e999, "b": 1}', "too large"),
        (b'{"a": "1.5", "b": 1}', "key 'a': value '1.5' is not a finite number"),
        (b'{"a": true, "b": 1}', "key 'a': value true is not a finite number"),
        (b"id\tvalue\na\tnan\nb\t1\n", "line 2: value 'nan' is not a finite number"),
        (b"id\tvalue\na\tinf\nb\t1\n", "line 2: value 'inf' is not a finite number"),
        (b"id\tvalue\na\t1e999\nb\t1\n", "line 2: value '1e999' is not a finite number"),
        (b"id\tvalue\na\t1\n", "id 'b': has no value in the submission"),
        (b'{"a": 1e151, "b": 1}', "key 'a': value 1e+151 is not a finite number (of magnitude at most 1e150)"),
        (b'{"a": -1e300, "b": 1}', "key 'a': value -1e+300 is not a finite number"),
    ],
)
def test_non_finite_values_and_missing_ids_are_refused(submission: bytes, problem: str) -> None:
    with pytest.raises(InvalidSubmission) as caught:
        regress(tsv([("a", "1"), ("b", "2")]), submission)
    assert problem in str(caught.value)


def test_numbers_in_text_columns_take_decimal_syntax() -> None:
    gold = tsv([("a", "1"), ("b", "2.5e0"), ("c", "-.5")])
    report = regress(gold, b'{"a": 1, "b": 2.5, "c": -0.5}')
    assert report.metrics["mae"] == 0.0 and math.isclose(report.metrics["pearson"], 1.0)


def test_podium_score_of_a_small_sample_imports_neither_scipy_nor_numpy() -> None:
    # scipy.stats takes about 0.6 s to import, twenty times a bare Python's start-up, and numpy about 50 ms, most of a
    # test-size run's: the correlations are computed without SciPy, and a small sample without numpy either.
    probe = podium_probe("sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'numpy'))")
    test = ROOT / "examples" / "regression" / "data" / "test.tsv"
    args = ["score", "--scorer", "regression", "--gold", str(test), "--submission", str(test), "--json"]
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["pearson"] == metrics["spearman"] == 1.0  # the correlations were computed
    assert done.stderr.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("rows", [PLAIN_MAX, PLAIN_MAX + 1])
def test_numpy_scores_every_group_of_a_large_grouped_scoring(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """Groups of a few pairs each are small, but together past ``PLAIN_MAX`` they are numpy's to score (faster than
    Python's loops then); up to it, none of them imports numpy. Both give the same floats."""
    ways: list[str] = []
    plain, numpy_way = regression_plain.scores, regression.numpy_scores
    monkeypatch.setattr(regression_plain, "scores", lambda *a: ways.append("plain") or plain(*a))
    monkeypatch.setattr(regression, "numpy_scores", lambda *a: ways.append("numpy") or numpy_way(*a))
    gold = tsv([(f"i{n}", str(n % 7), f"g{n % 40}") for n in range(rows)], ("id", "value", "topic"))
    submission = json.dumps({f"i{n}": (n * 3) % 5 for n in range(rows)}).encode()
    report = regress(gold, submission, group_by=["topic"])
    assert len(report.units) == 40 and len(ways) == 40
    assert set(ways) == ({"plain"} if rows <= PLAIN_MAX else {"numpy"})
