"""One contract over every registered scorer.

* a perfect submission reaches the maximum (or the value the official definition caps it at);
* the order of lines and keys does not change a number;
* the same input gives the same output, and a subset of units aggregates like the whole;
* garbage is refused with a ``ValidationError`` that has a message.

A new scorer must add a perfect-submission builder below; the first test fails until it does.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import random
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scorers import ValidationError, get_scorer, scorer_names
from tests.codalab import tiny
from tests.conftest import shared_dir
from tests.scorers.collector import MAX_PASSES, collector_passes

SEED_SCORERS = [
    "svident-detection",
    "svident-disambiguation",
    "scier-ere",
    "scier-re",
    "famus-cdae",
    "famus-sv",
]
CONFORMANCE = shared_dir() / "conformance"
needs_shared = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason=f"conformance cases not found at {CONFORMANCE}")


def _svident_rows(gold: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(gold.decode("utf-8-sig"), newline=""), delimiter="\t"))


def _relevant(row: dict[str, str]) -> list[str]:
    if row["is_variable"] != "1":
        return []
    return [v for v in row["variable"].split(";") if v and v != "unk"]


def perfect_svident_detection(gold: bytes) -> tuple[bytes, dict[str, float]]:
    labels = {row["uuid"]: row["is_variable"] for row in _svident_rows(gold)}
    return json.dumps(labels).encode(), {"f1": 1.0, "precision": 1.0, "recall": 1.0}


def perfect_svident_disambiguation(gold: bytes) -> tuple[bytes, dict[str, float]]:
    """Every relevant variable above one distractor. AP@k caps at min(k, R) / R (SCORING.md),
    averaged over the queries of a group, then over groups of a language, then languages."""
    run: dict[str, dict[str, float]] = {}
    per_group: dict[tuple[str, str], list[int]] = {}
    for row in _svident_rows(gold):
        relevant = list(dict.fromkeys(_relevant(row)))
        if not relevant:
            continue
        run[row["uuid"]] = {v: 10.0 - i * 0.01 for i, v in enumerate(relevant)} | {"distractor-x": -1.0}
        per_group.setdefault((row["lang"], row["doc_id"]), []).append(len(relevant))
    expected = {"r_precision": 1.0}
    for k in (1, 5, 10, 20):
        by_lang: dict[str, list[float]] = {}
        for (lang, _), sizes in per_group.items():
            by_lang.setdefault(lang, []).append(sum(min(k, r) / r for r in sizes) / len(sizes))
        expected[f"map@{k}"] = sum(sum(v) / len(v) for v in by_lang.values()) / len(by_lang)
    return json.dumps(run).encode(), expected


def _perfect_scier(gold: bytes, with_ner: bool) -> tuple[bytes, dict[str, float]]:
    lines = []
    for line in gold.decode().splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        out: dict[str, Any] = {"doc_id": doc["doc_id"]}
        if with_ner:
            out["predicted_ner"] = doc["ner"]
        out["predicted_relations"] = [[list(r) for r in dict.fromkeys(map(tuple, rels))] for rels in doc["relations"]]
        lines.append(json.dumps(out))
    names = ("ner", "rel", "rel_plus") if with_ner else ("re",)
    expected = {f"{n}_{m}": 1.0 for n in names for m in ("p", "r", "f1")}
    return "\n".join(lines).encode(), expected


def perfect_famus_cdae(gold: bytes) -> tuple[bytes, dict[str, float]]:
    run = {}
    for line in gold.decode().splitlines():
        if line.strip():
            doc = json.loads(line)
            # A gold role holds entities of mentions ([text, offsets...]); a predicted role holds
            # fillers [text]. The chosen gold has one mention per entity, so this is exact.
            run[doc["docid"]] = [
                {
                    role: value if role == "incident_type" else [[m[0]] for entity in value for m in entity]
                    for role, value in t.items()
                    if role != "template-spans"
                }
                for t in doc["templates"]
            ]
    names = [f"ceaf_rme_{s}_{m}" for s in ("phi3", "soft") for m in ("p", "r", "f1")]
    return json.dumps(run).encode(), dict.fromkeys(names, 1.0)


def perfect_famus_sv(gold: bytes) -> tuple[bytes, dict[str, float]]:
    labels = {}
    for line in gold.decode().splitlines():
        if line.strip():
            doc = json.loads(line)
            labels[doc["instance_id"]] = int(doc["valid_source"])
    return json.dumps(labels).encode(), {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}


def _table(gold: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(gold.decode("utf-8-sig"), newline=""), delimiter="\t"))


def perfect_trec(gold: bytes) -> tuple[bytes, dict[str, float]]:
    """Each query's judged documents ranked by grade: MAP, nDCG@10 and reciprocal rank reach 1 (every query of the
    example has a relevant document); P@10 is min(R, 10) / 10 averaged over the queries (the default measures)."""
    judged: dict[str, dict[str, int]] = {}
    for line in gold.decode().splitlines():
        if line.strip():
            query, _, docno, grade = line.split()
            judged.setdefault(query, {})[docno] = int(grade)
    lines = []
    for query, grades in judged.items():
        ranked = sorted(grades, key=lambda d: -grades[d])
        lines += [f"{query} Q0 {docno} {rank} {100 - rank} perfect" for rank, docno in enumerate(ranked, start=1)]
    relevant = [sum(1 for g in grades.values() if g >= 1) for grades in judged.values()]
    p10 = sum(min(r, 10) / 10 for r in relevant) / len(relevant)
    return "\n".join(lines).encode(), {"map": 1.0, "P_10": p10, "ndcg_cut_10": 1.0, "recip_rank": 1.0}


def perfect_classification(gold: bytes) -> tuple[bytes, dict[str, float]]:
    labels = {row["id"]: row["label"] for row in _table(gold)}
    return json.dumps(labels).encode(), dict.fromkeys(["accuracy", "precision", "recall", "f1"], 1.0)


def perfect_regression(gold: bytes) -> tuple[bytes, dict[str, float]]:
    values = {row["id"]: float(row["value"]) for row in _table(gold)}
    perfect = {"pearson": 1.0, "spearman": 1.0, "kendall": 1.0, "mae": 0.0, "rmse": 0.0, "r2": 1.0}
    return json.dumps(values).encode(), perfect


def perfect_program(gold: bytes) -> tuple[bytes, dict[str, float]]:
    """The reference data's own lines as the prediction of the tiny scoring program (tests/codalab/tiny.py)."""
    reference = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(io.BytesIO(gold)).read("reference.zip")))
    truth = reference.read("truth.txt").decode().split()
    return tiny.result(truth), {"accuracy": 1.0, "lines": float(len(truth))}


PERFECT: dict[str, tuple[str, Callable[[bytes], tuple[bytes, dict[str, float]]]]] = {
    # scorer: (a conformance case whose gold has no documented cap, builder)
    "svident-detection": ("val-perfect", perfect_svident_detection),
    "svident-disambiguation": ("val-perfect", perfect_svident_disambiguation),
    "scier-ere": ("dev-gold", lambda g: _perfect_scier(g, with_ner=True)),
    "scier-re": ("dev-gold", lambda g: _perfect_scier(g, with_ner=False)),
    "famus-cdae": ("addendum-report-gold-self", perfect_famus_cdae),
    "famus-sv": ("dev-part-addendum-gold-self", perfect_famus_sv),
    # The generic scorers have no conformance case: the builders serve the example bundles' golds (examples/).
    "trec": ("", perfect_trec),
    "classification": ("", perfect_classification),
    "regression": ("", perfect_regression),
    "program": ("", perfect_program),
}


def _file(case: Path, stem: str) -> bytes:
    (path,) = [p for p in case.iterdir() if p.stem == stem]
    return path.read_bytes()


def _shuffled(submission: bytes, seed: int) -> bytes:
    """The same submission with its top-level keys (JSON) or its lines (JSON Lines) reordered."""
    rng = random.Random(seed)
    text = submission.decode("utf-8-sig")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        lines = [line for line in text.splitlines() if line.strip()]
        rng.shuffle(lines)
        return "\n".join(lines).encode()
    items = list(data.items())
    rng.shuffle(items)
    return json.dumps(dict(items)).encode()


def test_every_seed_scorer_is_registered_and_has_a_perfect_builder() -> None:
    assert set(SEED_SCORERS) <= set(scorer_names())
    assert set(scorer_names()) <= set(PERFECT) | {n for n in scorer_names() if n.startswith("test-")}


@pytest.mark.parametrize("name", SEED_SCORERS)
def test_declarations_are_consistent(name: str) -> None:
    scorer = get_scorer(name)
    described = scorer.describe()
    metric_names = [m.name for m in described.metrics]
    assert described.primary_metric in metric_names
    assert set(described.secondary_metrics) <= set(metric_names)
    assert all(m.meaning for m in described.metrics)
    assert described.version
    # The plain-data form (API, `podium scorers --json`) says the same.
    as_data = json.loads(json.dumps(described.to_dict()))
    assert as_data["primary_metric"] == described.primary_metric
    assert [m["name"] for m in as_data["metrics"]] == metric_names
    assert as_data["higher_is_better"] == described.higher_is_better == scorer.higher_is_better


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_perfect_submission_reaches_the_maximum(name: str) -> None:
    case_name, build = PERFECT[name]
    gold = _file(CONFORMANCE / name / case_name, "gold")
    submission, expected = build(gold)
    report = get_scorer(name).score(gold, submission)
    assert report.metrics == pytest.approx(expected, abs=1e-12)


def _valid_cases(name: str) -> list[Path]:
    folder = CONFORMANCE / name
    return sorted(p for p in folder.iterdir() if p.is_dir())[:3] if folder.is_dir() else []


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_order_of_lines_and_keys_does_not_matter_and_runs_repeat(name: str) -> None:
    scorer = get_scorer(name)
    for case in _valid_cases(name):
        gold, submission = _file(case, "gold"), _file(case, "submission")
        first = scorer.score(gold, submission)
        assert scorer.score(gold, submission) == first
        for seed in (1, 2):
            assert scorer.score(gold, _shuffled(submission, seed)).metrics == first.metrics, case.name


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_whole_set_of_units_aggregates_to_the_overall_numbers(name: str) -> None:
    scorer = get_scorer(name)
    for case in _valid_cases(name):
        gold = scorer.parse_gold(_file(case, "gold"))
        parsed = scorer.parse_submission(_file(case, "submission"), scorer.public_view(gold))
        report = scorer.compute(gold, parsed)
        units = sorted(report.units)
        assert scorer.compute(gold, parsed, units=units).metrics == pytest.approx(report.metrics, abs=1e-12)
        json.dumps(report.units)  # stored with the score, so it must be plain JSON


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_the_report_without_units_is_compute_s_to_the_bit(name: str) -> None:
    """``compute_report`` (what ``podium score`` prints; famus-cdae's never holds every document's statistics) is
    ``compute(...).to_dict()``: the same keys in the same order and the same floats, on every valid case."""
    scorer = get_scorer(name)
    folder = CONFORMANCE / name
    for case in sorted(p for p in folder.iterdir() if p.is_dir() and (p / "expected.json").exists()):
        gold = scorer.parse_gold(_file(case, "gold"))
        parsed = scorer.parse_submission(_file(case, "submission"), scorer.public_view(gold))
        expected = scorer.compute(gold, parsed).to_dict()
        assert json.dumps(scorer.compute_report(gold, parsed)) == json.dumps(expected), case.name


@needs_shared
@pytest.mark.parametrize("name", SEED_SCORERS)
def test_parsing_and_computing_run_with_the_collector_paused(name: str) -> None:
    """Each collector pass walks every object parsed so far, so on a large file the passes cost more than the
    parse itself: parsing and computing pause the collector (scorers.io.gc_paused) and turn it on afterwards."""
    case_name, build = PERFECT[name]
    gold_bytes = _file(CONFORMANCE / name / case_name, "gold")
    submission, _ = build(gold_bytes)
    scorer = get_scorer(name)
    with collector_passes() as gold_passes:
        gold = scorer.parse_gold(gold_bytes)
    with collector_passes() as public_passes:
        public = scorer.public_view(gold)
    with collector_passes() as submission_passes:
        parsed = scorer.parse_submission(submission, public)
    with collector_passes() as compute_passes:
        scorer.compute(gold, parsed)
    # Hundreds to thousands of passes each (about one per container) when the collector runs meanwhile.
    counts = [len(gold_passes), len(public_passes), len(submission_passes), len(compute_passes)]
    assert max(counts) <= MAX_PASSES, counts
    assert gc.isenabled()


def test_collector_passes_counts_the_blocks_own_thread_only() -> None:
    """Another thread allocating meanwhile (execnet's reader under pytest-xdist) starts passes the block did not
    cause; the block's own allocations still count, so an unpaused parse is still caught."""

    go, done = threading.Lock(), threading.Lock()
    go.acquire()
    done.acquire()

    def other_thread() -> None:
        with go:
            _ = [[i] for i in range(200)]
        done.release()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with collector_passes() as passes:
        go.release()  # plain locks: the block itself allocates no container while the other thread runs
        done.acquire()
    worker.join()
    assert len(passes) <= MAX_PASSES, passes
    with collector_passes() as passes:
        _ = [[i] for i in range(200)]
    assert len(passes) > MAX_PASSES


GARBAGE = [b"", b"\x00\xff\xfe garbage", b"[]", b"{}", b'"text"', b"null"]
# An empty mapping is a valid FAMuS CDAE submission (documents left out predict nothing) and a valid SV-Ident
# disambiguation run (queries left out score 0; which sentences are queries is the answer).
EMPTY_IS_VALID = {("famus-cdae", b"{}"), ("svident-disambiguation", b"{}")}
GARBAGE_CASES = [(n, g) for n in SEED_SCORERS for g in GARBAGE if (n, g) not in EMPTY_IS_VALID]


@needs_shared
@pytest.mark.parametrize(("name", "garbage"), GARBAGE_CASES)
def test_garbage_is_refused_with_a_message(name: str, garbage: bytes) -> None:
    case_name, _ = PERFECT[name]
    scorer = get_scorer(name)
    gold = scorer.parse_gold(_file(CONFORMANCE / name / case_name, "gold"))
    with pytest.raises(ValidationError) as caught:
        scorer.parse_submission(garbage, scorer.public_view(gold))
    assert caught.value.problems
    assert str(caught.value).startswith("The submission was refused")
