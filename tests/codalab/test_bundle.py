"""CodaLab v1.5 and Codabench v2 bundles translated into Podium's bundle format.

The two reference bundles are read from ../shared/reference/codabench; smaller cases are written here.
"""

from __future__ import annotations

import textwrap
import zipfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from codalab.bundle import CodalabError, Reader, detect, slugify, translate
from tests.conftest import require_shared


def unzip(name: str, into: Path) -> Path:
    with zipfile.ZipFile(require_shared("reference", "codabench", name)) as archive:
        archive.extractall(into)
    return into


def test_codalab_v15_bundle(tmp_path: Path) -> None:
    t = translate(unzip("competition_15.zip", tmp_path))
    assert t.kind == "codalab-1.5" and t.problems == []
    doc = t.document
    assert doc["title"] == "Sample time series competition" and doc["participation"] == "open"
    assert "## Overview" in doc["description"] and "## Terms and conditions" in doc["description"]
    assert "<h1>" not in doc["description"]  # the HTML pages became Markdown
    [task] = doc["tasks"]
    assert task["title"] == doc["title"] and task["scorer"] == "program"
    assert task["scorer_options"] == {
        "metrics": [
            {"key": "prediction_score", "title": "Prediction score", "higher_is_better": True, "decimals": 4},
            {"key": "Duration", "title": "Duration", "higher_is_better": True, "decimals": 2},
        ],
        "image": "codalab/codalab-legacy:py3",
    }
    dev, final = task["phases"]
    assert (dev["title"], dev["slug"], final["title"]) == ("Development Phase", "development-phase", "Final Phase")
    # A v1.5 phase ends where the next one starts; the last one at the competition's end_date (null: never).
    assert (dev["starts_at"], dev["ends_at"]) == ("2019-01-01T00:00Z", "2019-09-30T00:00Z")
    assert (final["starts_at"], final["ends_at"]) == ("2019-09-30T00:00Z", None)
    assert (dev["daily_limit"], dev["total_limit"], dev["time_limit"], final["time_limit"]) == (5, None, 500, 300)
    assert dev["gold"] == {"path": "evaluation_data.zip"}
    assert dev["program"] == {"path": "scoring_program", "name": "scoring_program.zip"}
    assert dev["ingestion_program"] == {"path": "ingestion_program.zip"}
    # The input data is what the ingestion program reads, never published (here it is the reference data itself).
    assert dev["input_data"] == final["input_data"] == {"path": "evaluation_data.zip"}
    assert [f["path"] for f in dev["public_files"]] == ["starting_kit.zip", "training_data.zip"]
    assert final["public_files"] == []
    warnings = "\n".join(t.warnings)
    for expected in (
        "admin_names",
        "color",
        "auto_migration",
        "score.py, line 124: inconsistent use of tabs and spaces in indentation (TabError)",
        "the bundle holds both the folder scoring_program and scoring_program.zip",
    ):
        assert expected in warnings


def test_codabench_v2_bundle(tmp_path: Path) -> None:
    t = translate(unzip("competition_v2_multi_task.zip", tmp_path))
    assert t.kind == "codabench-2" and t.problems == []
    doc = t.document
    assert doc["title"] == "Classify Wheat Seeds - Single phase with multiple task"
    assert doc["participation"] == "approval"  # registration_auto_approve is not set
    assert "## Participation" in doc["description"] and "## Terms and conditions" in doc["description"]
    titles = [task["title"] for task in doc["tasks"]]
    assert titles == [
        "Wheat Seed First Task",
        "Wheat Seed Second Task",
        "Wheat Seed Third Task",
        "Wheat Seed Fourth Task",
    ]
    for task, folder in zip(doc["tasks"], ("first", "second", "third", "fourth"), strict=True):
        assert task["scorer_options"]["metrics"] == [
            {"key": "accuracy", "title": "Prediction score", "higher_is_better": True},
            {"key": "duration", "title": "Duration", "higher_is_better": True},
        ]
        [phase] = task["phases"]
        assert phase["title"] == "Single Phase with Multiple Task" and phase["starts_at"] == "2020-06-15T00:00Z"
        assert phase["ends_at"] is None and phase["time_limit"] == 600
        assert phase["gold"] == {"path": f"{folder}/reference_data", "name": "reference_data.zip"}
        # The input data is the ingestion program's hidden input: not published.
        assert phase["public_files"] == []
        assert phase["input_data"] == {"path": f"{folder}/input_data", "name": "input_data.zip"}
        assert phase["program"]["path"] == "scoring_program"
        assert phase["ingestion_program"] == {"path": "ingestion_program", "name": "ingestion_program.zip"}
    assert any("solutions" in w for w in t.warnings) and any("image" in w for w in t.warnings)


def write_bundle(folder: Path, text: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "competition.yaml").write_text(textwrap.dedent(text))
    for name, content in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    return folder


V2 = """
    version: 2
    title: Tiny
    registration_auto_approve: true
    docker_image: codalab/codalab-legacy:py39
    tasks:
      - {index: 0, name: Only, reference_data: ref, scoring_program: prog}
    phases:
      - {name: Dev, start: 2024-01-01T10:30:45+02:00, end: 12-31-2024, tasks: [0], max_submissions: 0,
         max_submissions_per_day: 3, execution_time_limit_ms: 1500, public_data: pub.zip}
    leaderboards:
      - {title: R, key: r, columns: [{title: Error, key: err, index: 1, sorting: asc}, {title: F1, key: f1, index: 0}]}
"""
V2_FILES = {
    "ref/truth.txt": "1",
    "prog/metadata": "command: python3 /app/program/s.py",
    "prog/s.py": "",
    "pub.zip": "x",
}


def test_v2_dates_limits_columns_and_images(tmp_path: Path) -> None:
    t = translate(write_bundle(tmp_path, V2, V2_FILES))
    assert t.problems == []
    [task] = t.document["tasks"]
    assert task["scorer_options"]["image"] == "codalab/codalab-legacy:py39"
    assert [m["key"] for m in task["scorer_options"]["metrics"]] == ["f1", "err"]  # index 0 first: the primary
    assert task["scorer_options"]["metrics"][1]["higher_is_better"] is False
    [phase] = task["phases"]
    assert (phase["starts_at"], phase["ends_at"]) == ("2024-01-01T08:30Z", "2024-12-31T00:00Z")
    assert (phase["daily_limit"], phase["total_limit"], phase["time_limit"]) == (3, None, 2)
    assert t.document["participation"] == "open"
    assert any("rounded down to the minute" in w for w in t.warnings)
    assert any("max_submissions: 0 means no limit" in w for w in t.warnings)


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (("reference_data: ref", "reference_data: missing"), "tasks[0].reference_data", "not in the bundle"),
        (("reference_data: ref", "reference_data: ../../etc"), "tasks[0].reference_data", "not a path inside"),
        (
            ("reference_data: ref", "reference_data: 2b2bf7ac-3bb0-4a0e-a5e0-7b1fb3c1f6a8"),
            "tasks[0].reference_data",
            "Codabench dataset key",
        ),
        (("scoring_program: prog", "scoring_program: ref"), "tasks[0].scoring_program", "no metadata file"),
        (
            ("scoring_program: prog}", "scoring_program: prog, ingestion_program: ref}"),
            "tasks[0].ingestion_program",
            "the ingestion program has no metadata file",
        ),
        (("start: 2024-01-01T10:30:45+02:00", "start: soon"), "phases[0].start", "not a date"),
        (("sorting: asc", "sorting: up"), "leaderboards[0].columns[0]", "asc or desc"),
    ],
)
def test_v2_problems_name_their_key(tmp_path: Path, change: tuple[str, str], key: str, message: str) -> None:
    t = translate(write_bundle(tmp_path, V2.replace(*change), V2_FILES))
    assert any(k == key and message in m for k, m in t.problems), t.problems


def test_a_link_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "gold.txt").write_text("secret")
    bundle = write_bundle(tmp_path / "bundle", V2, V2_FILES)
    (bundle / "pub.zip").unlink()
    (bundle / "pub.zip").symlink_to(tmp_path / "outside" / "gold.txt")
    t = translate(bundle)
    assert ("phases[0].public_data", "'pub.zip' leads outside the bundle") in t.problems


def test_public_files_identical_to_the_reference_data_are_not_published(tmp_path: Path) -> None:
    files = {**V2_FILES, "pub/truth.txt": "1"}
    t = translate(write_bundle(tmp_path, V2.replace("public_data: pub.zip", "public_data: pub"), files))
    assert t.document["tasks"][0]["phases"][0]["public_files"] == []
    assert any("same as the reference data" in w for w in t.warnings)


V15 = """
    title: Old one
    has_registration: True
    end_date: 2020-03-01
    phases:
      2: {phasenumber: 2, label: Test, start_date: 2-1-2020, reference_data: ref, scoring_program: prog, color: red}
      1: {phasenumber: 1, label: Test, start_date: 2020-01-01, reference_data: ref, scoring_program: prog,
          max_submissions: 10, force_best_submission_to_leaderboard: True}
    leaderboard:
      leaderboards:
        A: &A {label: A, rank: 1}
        B: &B {label: B, rank: 2}
      columns:
        second: {leaderboard: *B, label: Second, rank: 2, sort: asc}
        first: {leaderboard: *A, label: First, rank: 1, numeric_format: 3}
"""


def test_v15_order_ends_selection_and_leaderboards(tmp_path: Path) -> None:
    t = translate(write_bundle(tmp_path, V15, V2_FILES))
    assert t.problems == []
    assert t.document["participation"] == "approval"
    [task] = t.document["tasks"]
    assert task["scorer_options"]["image"] == "codalab/codalab-legacy:py37"  # CodaLab's default
    assert [m["key"] for m in task["scorer_options"]["metrics"]] == ["first", "second"]
    first, second = task["phases"]
    assert (first["slug"], second["slug"]) == ("test", "test-2")
    assert (first["starts_at"], first["ends_at"]) == ("2020-01-01T00:00Z", "2020-02-01T00:00Z")
    assert (second["starts_at"], second["ends_at"]) == ("2020-02-01T00:00Z", "2020-03-01T00:00Z")
    assert (first["selection"], second["selection"], first["total_limit"]) == ("best", "chosen", 10)
    assert any("columns of all 2 leaderboards" in w for w in t.warnings)
    assert "result_files" not in task["scorer_options"]  # no starting kit shows a sample result


@pytest.mark.parametrize("zipped", [False, True])
def test_a_starting_kits_sample_result_names_the_files_a_result_must_hold(tmp_path: Path, zipped: bool) -> None:
    """Public facts only: the names come from the kit participants download, never from the reference data."""
    text = V15.replace("scoring_program: prog, color: red}", "scoring_program: prog, starting_kit: kit}")
    sample = {"kit/sample_result_submission/test.predict": "0", "kit/sample_result_submission/valid.predict": "0"}
    if zipped:
        sample = {"kit/sample_result_submission.zip": ""}
    t = translate(write_bundle(tmp_path, text, {**V2_FILES, "kit/README.md": "read me", **sample}))
    if zipped:  # a kit may hold the sample result zipped
        with zipfile.ZipFile(tmp_path / "kit" / "sample_result_submission.zip", "w") as archive:
            archive.writestr("test.predict", "0")
            archive.writestr("valid.predict", "0")
        t = translate(tmp_path)
    assert t.problems == []
    [task] = t.document["tasks"]
    assert task["scorer_options"]["result_files"] == ["test.predict", "valid.predict"]


def test_detection_and_other_formats(tmp_path: Path) -> None:
    assert detect({"version": 2, "tasks": []}) == "codabench-2"
    assert detect({"title": "x", "phases": {1: {}}}) == "codalab-1.5"
    assert detect({"slug": "x", "title": "x", "tasks": []}) is None
    assert detect(["not", "a", "mapping"]) is None
    with pytest.raises(CodalabError, match="neither"):
        translate(write_bundle(tmp_path, "slug: mine\ntitle: Mine\ntasks: []\n"))
    assert slugify("Classify Wheat Seeds - Single phase!", "x") == "classify-wheat-seeds-single-phase"
    assert slugify("Élan", "x") == "elan" and slugify("***", "fallback") == "fallback"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("8-7-2019", "2019-08-07T00:00Z"),
        ("6-15-2020", "2020-06-15T00:00Z"),
        ("2019-08-07", "2019-08-07T00:00Z"),
        ("2019-08-07T12:00:00Z", "2019-08-07T12:00Z"),
        ("2019-08-07 12:00:00+02:00", "2019-08-07T10:00Z"),
        (date(2019, 8, 7), "2019-08-07T00:00Z"),
        (datetime(2019, 8, 7, 5, 6), "2019-08-07T05:06Z"),
        (None, None),
        ("null", None),
    ],
)
def test_both_date_styles(tmp_path: Path, value: Any, expected: str | None) -> None:
    reader = Reader(tmp_path, {})
    assert reader.time(value, "start") == expected
    assert reader.problems == []


RANKED = V2.replace(
    "{title: F1, key: f1, index: 0}]}",
    "{title: F1, key: f1, index: 0},\n"
    "                                           {title: Average rank, key: avg_rank, index: 2, sorting: asc,\n"
    "                                            computation: avg_rank, computation_indexes: [0, 1]}]}",
)


def test_a_v2_column_computed_as_the_average_rank_is_a_board_ranked_by_the_mean_of_ranks(tmp_path: Path) -> None:
    """Codabench's ``avg_rank`` (the mean of fractional ranks over other columns) is Podium's ``mean_of_ranks``:
    the column becomes a further board of each phase, not a metric the program would have to write."""
    t = translate(write_bundle(tmp_path / "ranked", RANKED, V2_FILES))
    assert t.problems == []
    [task] = t.document["tasks"]
    assert [m["key"] for m in task["scorer_options"]["metrics"]] == ["f1", "err"]
    [phase] = task["phases"]
    assert phase["boards"] == [
        {"name": "avg-rank", "title": "Average rank", "metrics": ["f1", "err"], "ranking": "mean_of_ranks"}
    ]
    assert not any("computation" in w for w in t.warnings)
    # Indexes that name no column of the leaderboard are a problem named by key path.
    wrong = translate(write_bundle(tmp_path / "wrong", RANKED.replace("[0, 1]", "[0, 7]"), V2_FILES))
    assert any(k == "leaderboards[0].columns[2].computation_indexes" for k, _ in wrong.problems), wrong.problems
    # Another computation (an average of values) is not a rank: dropped with a warning, as before.
    averaged = translate(
        write_bundle(tmp_path / "avg", RANKED.replace("computation: avg_rank", "computation: avg"), V2_FILES)
    )
    assert any(
        "not imported (Podium has no equivalent): computation, computation_indexes" in w for w in averaged.warnings
    )
