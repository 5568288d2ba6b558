"""Competition bundles: the shipped examples and release bundles load, and what a minimal bundle means.
(The refusals are in ``test_loader_refusals.py``.)"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.services.bundles.loader import load_bundle
from app.services.bundles.spec import BundleError, CompetitionSpec
from scorers import get_scorer
from tests.conftest import ROOT, require_shared

EXAMPLES = ROOT / "examples"
GOLD = "tasks[0].phases[0].gold"

TSV_HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
GOLD_TSV = (
    TSV_HEADER
    + "A sentence about trust.\t1\texploredata-EX1_Varq1\tEX1\td1\tu1\ten\n"
    + "A sentence about nothing.\t0\t\t\td1\tu2\ten\n"
).encode()


def make_phase(**changes: Any) -> dict[str, Any]:
    phase: dict[str, Any] = {"slug": "test", "title": "Test", "gold": {"path": "data/gold.tsv"}}
    phase.update(changes)
    return phase


def make_task(**changes: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "slug": "detection",
        "title": "Detection",
        "scorer": "svident-detection",
        "phases": [make_phase()],
    }
    task.update(changes)
    return task


def make_bundle(**changes: Any) -> dict[str, Any]:
    bundle: dict[str, Any] = {"slug": "demo", "title": "Demo", "tasks": [make_task()]}
    bundle.update(changes)
    return bundle


def write_bundle(folder: Path, document: dict[str, Any] | str, files: dict[str, bytes] | None = None) -> Path:
    """The bundle folder: ``competition.yaml`` plus ``data/gold.tsv`` and any other ``files``."""
    folder.mkdir(parents=True, exist_ok=True)
    text = document if isinstance(document, str) else yaml.safe_dump(document, sort_keys=False)
    (folder / "competition.yaml").write_text(text, encoding="utf-8")
    for name, data in {"data/gold.tsv": GOLD_TSV, **(files or {})}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def problems_of(folder: Path, data_dir: Path | None = None) -> list[tuple[str, str]]:
    with pytest.raises(BundleError) as caught:
        load_bundle(folder, data_dir)
    return caught.value.problems


def keys_of(folder: Path, data_dir: Path | None = None) -> list[str]:
    return [key for key, _ in problems_of(folder, data_dir)]


def phases(spec: CompetitionSpec) -> dict[str, list[str]]:
    return {task.slug: [phase.slug for phase in task.phases] for task in spec.tasks}


# -- the shipped examples ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("svident", {"detection": ["test"], "disambiguation": ["test"]}),
        ("scier", {"ere": ["dev", "test-id", "test-ood"], "re": ["dev", "test-id", "test-ood"]}),
        ("famus", {"sv": ["dev", "test"], "cdae-report": ["test"], "cdae-source": ["test"]}),
        ("trec", {"ranking": ["test"]}),
        ("classification", {"sentiment": ["test"]}),
        ("regression", {"similarity": ["test"]}),
        ("svident-code", {"detection": ["test"]}),
    ],
)
def test_example_bundle_loads_open_to_all_with_public_phases_open_now(
    name: str, expected: dict[str, list[str]]
) -> None:
    spec = load_bundle(EXAMPLES / name / "competition.yaml")
    assert spec.slug in (name, f"{name}-example")
    assert phases(spec) == expected
    assert spec.participation == "open"
    assert spec.warnings == ()  # the trec example averages over every query (complete_queries: true)
    for task in spec.tasks:
        scorer = get_scorer(task.scorer, task.scorer_options)
        for phase in task.phases:
            scorer.parse_gold(phase.gold.data)  # raises if the scorer refuses the gold
            assert (phase.starts_at, phase.ends_at, phase.visibility) == (None, None, "public")
            assert phase.public_files, f"{task.slug}/{phase.slug} gives participants nothing to predict on"
            assert phase.gold.data not in [f.data for f in phase.public_files]


def test_famus_example_keeps_the_report_gold_for_organizers_only() -> None:
    spec = load_bundle(EXAMPLES / "famus")
    report, source = spec.tasks[1], spec.tasks[2]
    assert [f.name for f in source.resources] == ["report-gold.jsonl"]
    assert source.resources[0].data == report.phases[0].gold.data
    assert report.resources == ()


def test_private_demo_needs_approval_and_has_a_future_hidden_phase() -> None:
    spec = load_bundle(EXAMPLES / "private-demo")
    assert spec.participation == "approval"
    practice, final = spec.tasks[0].phases
    assert (practice.starts_at, practice.ends_at, practice.daily_limit, practice.visibility) == (
        None,
        None,
        5,
        "public",
    )
    assert final.starts_at == datetime(2030, 3, 1, tzinfo=UTC)
    assert final.ends_at == datetime(2030, 3, 15, 12, 0, tzinfo=UTC)
    assert (final.visibility, final.selection, final.total_limit, final.max_upload_bytes) == (
        "hidden",
        "chosen",
        3,
        1_000_000,
    )
    assert [f.name for f in final.public_files] == ["final-sentences.tsv"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("name", "gold_of_first_phase", "stand_in"),
    [
        ("svident", "svident/val.tsv", "val.tsv"),
        ("scier", "scier/PLM/dev.jsonl", "PLM/test.jsonl"),
        ("famus", "famus/FACTSlab_FAMuS/data/source_validation/dev.jsonl", "development"),
    ],
)
def test_release_bundle_loads_from_the_data_folder(name: str, gold_of_first_phase: str, stand_in: str) -> None:
    data = require_shared("data")
    spec = load_bundle(EXAMPLES / name / "release.yaml", data_dir=data)
    assert spec.slug == name
    assert phases(spec) == phases(load_bundle(EXAMPLES / name))
    first = spec.tasks[0].phases[0]
    assert first.gold.sha256 == _sha256(data / gold_of_first_phase)
    assert stand_in in spec.description  # says which split is scored
    assert "licen" in spec.description.lower()


def test_svident_release_scores_val_and_trains_on_train() -> None:
    data = require_shared("data", "svident")
    spec = load_bundle(EXAMPLES / "svident" / "release.yaml", data_dir=data.parent)
    for task in spec.tasks:
        # sha256 of val.tsv and train.tsv as listed in the data's PROVENANCE.md
        assert task.phases[0].gold.sha256 == "a5ec6da5d5fa6a56bda626aad0fe4b2546faed2cb6000cae43a0a787c1e041f0"
        assert task.training_files[0].sha256 == "58668c2bbb6a9cd5b9a83ea8eb4dbee8ef57577dbd32d2fe93200c51d60e7891"


def test_famus_release_gives_cdae_source_the_report_gold_as_a_resource() -> None:
    data = require_shared("data", "famus")
    spec = load_bundle(EXAMPLES / "famus" / "release.yaml", data_dir=data.parent)
    source = next(task for task in spec.tasks if task.slug == "cdae-source")
    assert source.resources[0].sha256 == _sha256(data / "derived" / "dev_report_gold_iterx.jsonl")
    assert source.phases[0].gold.sha256 == _sha256(data / "derived" / "dev_source_gold_iterx.jsonl")


# -- what a minimal bundle means ----------------------------------------------------------------------


def test_minimal_bundle_takes_the_defaults(tmp_path: Path) -> None:
    spec = load_bundle(write_bundle(tmp_path, make_bundle()))
    (task,) = spec.tasks
    (phase,) = task.phases
    assert (spec.description, spec.organizers, spec.participation) == ("", (), "open")
    assert (task.scorer_options, task.training_files, task.resources) == ({}, (), ())
    assert (phase.starts_at, phase.ends_at, phase.daily_limit, phase.total_limit, phase.max_upload_bytes) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert (phase.visibility, phase.selection, phase.public_files) == ("public", "best", ())
    assert (phase.opaque_ids, phase.intervals) == (False, True)  # intervals are on unless turned off
    assert (phase.gold.name, phase.gold.data) == ("gold.tsv", GOLD_TSV)
    assert phase.gold.sha256 == hashlib.sha256(GOLD_TSV).hexdigest()


def test_yaml_file_and_its_folder_load_the_same(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, make_bundle())
    assert load_bundle(folder) == load_bundle(folder / "competition.yaml")


def test_derived_inputs_drop_the_answers_and_are_named_after_the_phase(tmp_path: Path) -> None:
    public = [{"derive": "inputs", "from": "gold"}, {"derive": "inputs", "from": "gold", "name": "sentences.tsv"}]
    spec = load_bundle(write_bundle(tmp_path, make_bundle(tasks=[make_task(phases=[make_phase(public_files=public)])])))
    derived, renamed = spec.tasks[0].phases[0].public_files
    assert (derived.name, renamed.name) == ("test-inputs.tsv", "sentences.tsv")
    assert derived.data.decode().splitlines()[0] == "sentence\tresearch_data\tdoc_id\tuuid\tlang"
    assert derived.sha256 == hashlib.sha256(derived.data).hexdigest()


def test_times_are_utc_to_the_minute(tmp_path: Path) -> None:
    phase = make_phase(starts_at="2026-12-01T00:00Z", ends_at="2026-12-24T18:30:00+00:00")
    spec = load_bundle(write_bundle(tmp_path, make_bundle(tasks=[make_task(phases=[phase])])))
    loaded = spec.tasks[0].phases[0]
    assert loaded.starts_at == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    assert loaded.ends_at == datetime(2026, 12, 24, 18, 30, tzinfo=UTC)


def test_data_entries_read_from_the_data_folder(tmp_path: Path) -> None:
    data_dir = tmp_path / "release"
    (data_dir / "task").mkdir(parents=True)
    (data_dir / "task" / "val.tsv").write_bytes(GOLD_TSV)
    bundle = make_bundle(tasks=[make_task(phases=[make_phase(gold={"data": "task/val.tsv"})])])
    spec = load_bundle(write_bundle(tmp_path / "bundle", bundle), data_dir=data_dir)
    assert spec.tasks[0].phases[0].gold.name == "val.tsv"
