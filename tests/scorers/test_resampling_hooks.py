"""The resampling hooks of every seed scorer, on the conformance cases.

* ``weighted_metric``: for every metric, a row of unit counts gives what ``aggregate`` gives on the units
  repeated that many times, and NaN only where ``aggregate`` reports the convention's 0 for "undefined";
* ``stratum``: SV-Ident resamples within languages when it averages per language; the others need no
  strata, because they pool (micro sums) or average plainly over their units.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from scorers import ValidationError, get_scorer
from tests.conftest import shared_dir
from tests.scorers.test_contract import SEED_SCORERS

CONFORMANCE = shared_dir() / "conformance"
needs_shared = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason=f"conformance cases not found at {CONFORMANCE}")


def _file(case: Path, stem: str) -> Path:
    (path,) = [p for p in case.iterdir() if p.stem == stem]
    return path


def _reports(name: str) -> list[tuple[str, object, dict[str, object]]]:
    """(case, scorer, report) of the scorer's valid conformance cases (a few, to keep it quick)."""
    out = []
    folder = CONFORMANCE / name
    for case in sorted(p for p in folder.iterdir() if p.is_dir())[:6]:
        config = json.loads((case / "config.json").read_text()) if (case / "config.json").is_file() else None
        scorer = get_scorer(name, config)
        try:
            report = scorer.score(_file(case, "gold").read_bytes(), _file(case, "submission").read_bytes())
        except ValidationError:
            continue  # a case whose options the scorer refuses by default; other cases cover the scorer
        out.append((case.name, scorer, report))
    return out


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_weighted_metrics_aggregate_like_the_repeated_units(name: str) -> None:
    rng = np.random.default_rng(11)
    reports = _reports(name)
    assert reports
    for case, scorer, report in reports:
        ids = sorted(report.units)
        stats = [report.units[i] for i in ids]
        counts = rng.integers(0, 3, (8, len(ids))).astype(np.float64)
        counts = np.vstack([np.ones(len(ids)), counts])
        for spec in scorer.metrics:
            metric = scorer.weighted_metric(stats, spec.name)
            assert metric is not None, f"{name} has no vectorized {spec.name}"
            values = metric(counts)
            for row, value in zip(counts, values, strict=True):
                repeated = [s for s, c in zip(stats, row, strict=True) for _ in range(int(c))]
                expected = scorer.aggregate(repeated)[spec.name] if repeated else 0.0
                if math.isnan(value):
                    assert expected == 0.0, (case, spec.name)
                else:
                    assert value == pytest.approx(expected, abs=1e-12), (case, spec.name)
            # On all units once, the metric is the reported one (or undefined where the report says 0).
            assert (math.isnan(values[0]) and report.metrics[spec.name] == 0.0) or values[0] == pytest.approx(
                report.metrics[spec.name], abs=1e-12
            )


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_strata_are_declared_where_the_task_averages_per_part(name: str) -> None:
    for _, scorer, report in _reports(name):
        strata = {scorer.stratum(unit) for unit in report.units.values()}
        if name.startswith("svident"):
            assert strata == {unit["language"] for unit in report.units.values()}
        else:
            assert strata == {None}


@needs_shared
def test_svident_averaging_over_groups_needs_no_strata() -> None:
    scorer = get_scorer("svident-detection", {"average_by": "group"})
    case = CONFORMANCE / "svident-detection" / "train-mixedlang"
    report = scorer.score(_file(case, "gold").read_bytes(), _file(case, "submission").read_bytes())
    assert {scorer.stratum(unit) for unit in report.units.values()} == {None}
    stats = list(report.units.values())
    metric = scorer.weighted_metric(stats, "f1")
    assert metric is not None
    assert metric(np.ones((1, len(stats))))[0] == pytest.approx(report.metrics["f1"], abs=1e-12)
