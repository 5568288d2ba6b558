"""Benchmark inputs: renamed copies hold k times the units under unique ids, and score as the 1x inputs do."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from bench.enlarge import Record, TextFile, slot
from bench.score_inputs import SCORERS, build_inputs
from scorers.registry import get_scorer
from tests.conftest import require_shared

#: The field that holds each unit's id: (in the gold, in the submission; None for the keys of a JSON object).
ID_FIELDS = {
    "svident-detection": ("uuid", None),
    "svident-disambiguation": ("uuid", None),
    "scier-ere": ("doc_id", "doc_id"),
    "scier-re": ("doc_id", "doc_id"),
    "famus-cdae": ("docid", None),
    "famus-sv": ("instance_id", None),
    "trec": ("query", "query"),
}
COPIES = 2


def test_record_puts_each_id_with_the_suffix_in_its_slot() -> None:
    record = Record.of(f"a{slot(1)}b{slot(0)}c", ["x", "y"])
    assert record.render("") == "aybxc"
    assert record.render("-c2") == "ay-c2bx-c2c"


def test_record_refuses_a_text_without_every_slot() -> None:
    with pytest.raises(ValueError, match="2 id slots"):
        Record.of(f"a{slot(0)}b", ["x", "y"])


def test_text_file_writes_every_copy_between_head_and_tail(tmp_path: Path) -> None:
    records = (Record.of(f'"{slot(0)}": 1', ["a"]), Record.of(f'"{slot(0)}": 2', ["b"]))
    size = TextFile("f.json", "{", records, ", ", "}").write(tmp_path / "f.json", 2)
    assert (tmp_path / "f.json").read_text() == '{"a-c0": 1, "b-c0": 2, "a-c1": 1, "b-c1": 2}'
    # 4 entries of 9 characters ('"a-c0": 1'), 3 separators of 2, and the 2 braces.
    assert size == 4 * 9 + 3 * 2 + 2


def test_text_file_written_once_keeps_the_ids(tmp_path: Path) -> None:
    TextFile("f.jsonl", "", (Record.of(f'{{"id": "{slot(0)}"}}', ["a"]),), "\n", "\n").write(tmp_path / "f", 1)
    assert (tmp_path / "f").read_text() == '{"id": "a"}\n'


def unit_ids(path: Path, field: str | None) -> list[str]:
    """The ids a gold or submission file holds, read back independently of the generator, repeats kept."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".txt":  # TREC qrels and runs: the queries, each once
        return list(dict.fromkeys(line.split()[0] for line in text.splitlines() if line.strip()))
    if path.suffix == ".tsv":
        header, *rows = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
        return [row[header.index(field or "")] for row in rows if row]
    if path.suffix == ".jsonl":
        return [json.loads(line)[field] for line in text.splitlines() if line.strip()]
    objects: list[list[str]] = []

    def keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        objects.append([key for key, _ in pairs])
        return dict(pairs)

    json.loads(text, object_pairs_hook=keys)
    return objects[-1]  # the hook sees the top-level object last


@pytest.mark.parametrize("name", SCORERS)
def test_enlargement_has_k_times_the_units_under_new_ids_and_scores_the_same(name: str, tmp_path: Path) -> None:
    inputs = build_inputs(name, require_shared("data").parent, candidates=20)
    once = inputs.write(tmp_path / "x1", 1)
    copies = inputs.write(tmp_path / f"x{COPIES}", COPIES)
    for path_once, path_copies, field in zip(once, copies, ID_FIELDS[name], strict=True):
        ids, copied = unit_ids(path_once, field), unit_ids(path_copies, field)
        assert len(set(ids)) == len(ids) > 0
        assert len(copied) == COPIES * len(ids)
        assert set(copied) == {f"{i}-c{k}" for i in ids for k in range(COPIES)}
    scorer = get_scorer(name)
    report_once = scorer.score(once[0].read_bytes(), once[1].read_bytes())
    report_copies = scorer.score(copies[0].read_bytes(), copies[1].read_bytes())
    assert len(report_copies.units) == COPIES * len(report_once.units)
    # Each copy is a new set of whole units, so micro counts and means over groups are unchanged.
    assert report_copies.metrics == pytest.approx(report_once.metrics, abs=1e-9)


@pytest.mark.parametrize("name", ["svident-disambiguation", "scier-ere", "famus-cdae"])
def test_inputs_are_the_same_on_every_build(name: str, tmp_path: Path) -> None:
    shared = require_shared("data").parent
    first = build_inputs(name, shared, candidates=20).write(tmp_path / "a", 1)
    second = build_inputs(name, shared, candidates=20).write(tmp_path / "b", 1)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_task2_runs_hold_the_asked_number_of_candidates_per_query(tmp_path: Path) -> None:
    inputs = build_inputs("svident-disambiguation", require_shared("data").parent, candidates=20)
    gold, submission = inputs.write(tmp_path, 1)
    run = json.loads(submission.read_text(encoding="utf-8"))
    relevant = get_scorer("svident-disambiguation").parse_gold(gold.read_bytes()).relevant
    # 717 queries, as the official test set has; 20 candidates each, more only where more relevant ones were found.
    assert sorted(run) == sorted(relevant)
    assert len(run) == 717
    assert all(20 <= len(run[uuid]) <= max(20, len(variables)) for uuid, variables in relevant.items())
    assert sum(len(candidates) == 20 for candidates in run.values()) > 700


def test_trec_inputs_hold_a_thousand_queries_of_the_asked_number_of_documents(tmp_path: Path) -> None:
    qrels, run = build_inputs("trec", tmp_path, candidates=20).write(tmp_path, 1)
    lines = [line.split() for line in run.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 1000 * 20 and {len(fields) for fields in lines} == {6}
    assert len({(fields[0], fields[2]) for fields in lines}) == len(lines)
    judged = get_scorer("trec").parse_gold(qrels.read_bytes())
    assert len(judged.queries) == 1000


def test_unknown_scorer_is_refused() -> None:
    with pytest.raises(ValueError, match="no benchmark inputs"):
        build_inputs("nope", Path("/nonexistent"))


@pytest.mark.parametrize(
    ("name", "release"),
    [
        ("scier-ere", "scier/PLM/test.jsonl"),
        ("famus-cdae", "famus/derived/dev_report_gold_iterx.jsonl"),
        ("famus-sv", "famus/FACTSlab_FAMuS/data/source_validation/dev.jsonl"),
    ],
)
def test_gold_written_once_is_the_release_file(name: str, release: str, tmp_path: Path) -> None:
    data = require_shared("data")
    gold, _ = build_inputs(name, data.parent, candidates=20).write(tmp_path, 1)
    assert gold.read_bytes() == (data / release).read_bytes()
