"""Competition bundles: the shipped examples load, and every mistake is refused under its key path."""

from __future__ import annotations

import hashlib
import os
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
    ],
)
def test_example_bundle_loads_open_to_all_with_public_phases_open_now(
    name: str, expected: dict[str, list[str]]
) -> None:
    spec = load_bundle(EXAMPLES / name / "competition.yaml")
    assert spec.slug == name
    assert phases(spec) == expected
    assert spec.participation == "open"
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


# -- refusals, each under its key path ----------------------------------------------------------------


def with_phase(**changes: Any) -> dict[str, Any]:
    return make_bundle(tasks=[make_task(phases=[make_phase(**changes)])])


def test_path_that_climbs_out_of_the_bundle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside.tsv").write_bytes(GOLD_TSV)
    folder = write_bundle(tmp_path / "bundle", with_phase(gold={"path": "../outside.tsv"}))
    ((key, message),) = problems_of(folder)
    assert key == GOLD
    assert "'..'" in message


def test_absolute_path_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.tsv"
    outside.write_bytes(GOLD_TSV)
    folder = write_bundle(tmp_path / "bundle", with_phase(gold={"path": str(outside)}))
    assert keys_of(folder) == [GOLD]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_symbolic_link_leading_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.tsv").write_bytes(GOLD_TSV)
    folder = write_bundle(tmp_path / "bundle", with_phase(gold={"path": "data/link.tsv"}))
    (folder / "data" / "link.tsv").symlink_to(tmp_path / "secret.tsv")
    ((key, message),) = problems_of(folder)
    assert key == GOLD
    assert "outside the bundle folder" in message


def test_symbolic_link_inside_the_bundle_is_accepted(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold={"path": "data/link.tsv"}))
    (folder / "data" / "link.tsv").symlink_to(folder / "data" / "gold.tsv")
    assert load_bundle(folder).tasks[0].phases[0].gold.data == GOLD_TSV


def test_path_with_a_nul_character_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold={"path": "data/gold.tsv\x00"}))
    assert keys_of(folder) == [GOLD]


def test_file_given_as_plain_text_is_refused_with_the_form_to_use(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold="data/gold.tsv"))
    ((key, message),) = problems_of(folder)
    assert key == GOLD
    assert "{path: data/gold.tsv}" in message


def test_missing_file_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold={"path": "data/missing.tsv"}))
    assert problems_of(folder) == [(GOLD, "file not found: data/missing.tsv")]


def test_data_entry_without_a_data_folder_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold={"data": "svident/val.tsv"}))
    ((key, message),) = problems_of(folder)
    assert key == GOLD
    assert "no data folder was given" in message


def test_unknown_scorer_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(scorer="svident-detektion")]))
    ((key, message),) = problems_of(folder)
    assert key == "tasks[0].scorer"
    assert "svident-detection" in message  # the known names are listed


def test_unknown_scorer_option_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(scorer_options={"beta": 2})]))
    assert keys_of(folder) == ["tasks[0].scorer_options"]


def test_unknown_key_is_refused_with_a_suggestion(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(daily_limt=5))
    assert problems_of(folder) == [("tasks[0].phases[0].daily_limt", "unknown key (did you mean daily_limit?)")]


def test_missing_required_key_is_named(tmp_path: Path) -> None:
    phase = make_phase()
    del phase["gold"]
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(phases=[phase])]))
    assert problems_of(folder) == [(GOLD, "required key is missing")]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2026-12-01T00:00+02:00", "not in UTC"),
        ("2026-12-01T00:00", "no time zone"),
        ("2026-12-01T00:00:30Z", "has seconds"),
        ("2026-12-01T00:00:00.5Z", "has seconds"),
        ("2026-12-01", "ISO 8601"),
        ("next monday", "ISO 8601"),
        ("2026-13-01T00:00Z", "not a valid time"),
    ],
)
def test_bad_time_is_refused(tmp_path: Path, value: str, reason: str) -> None:
    folder = write_bundle(tmp_path, with_phase(starts_at=value))
    ((key, message),) = problems_of(folder)
    assert key == "tasks[0].phases[0].starts_at"
    assert reason in message


def test_time_written_with_seconds_by_yaml_stays_checked(tmp_path: Path) -> None:
    # Unquoted, YAML would read this as a timestamp; the bundle reader keeps it as text and checks it.
    text = yaml.safe_dump(with_phase(), sort_keys=False).replace(
        "title: Test\n", "title: Test\n    ends_at: 2026-12-01\n"
    )
    folder = write_bundle(tmp_path, text)
    ((key, message),) = problems_of(folder)
    assert key == "tasks[0].phases[0].ends_at"
    assert "ISO 8601" in message


def test_phase_that_ends_before_it_starts_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(starts_at="2026-12-02T00:00Z", ends_at="2026-12-01T00:00Z"))
    assert problems_of(folder) == [("tasks[0].phases[0].ends_at", "must be later than starts_at")]


def test_duplicate_task_slug_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(), make_task(title="Again")]))
    ((key, message),) = problems_of(folder)
    assert key == "tasks[1].slug"
    assert "tasks[0]" in message


def test_duplicate_phase_slug_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(phases=[make_phase(), make_phase()])]))
    assert keys_of(folder) == ["tasks[0].phases[1].slug"]


def test_same_phase_slug_in_two_tasks_is_fine(tmp_path: Path) -> None:
    tasks = [make_task(), make_task(slug="other")]
    assert [t.phases[0].slug for t in load_bundle(write_bundle(tmp_path, make_bundle(tasks=tasks))).tasks] == [
        "test",
        "test",
    ]


@pytest.mark.parametrize("slug", ["Detection", "task_1", "-lead", "trail-", "", "a" * 65])
def test_bad_slug_is_refused(tmp_path: Path, slug: str) -> None:
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(slug=slug)]))
    assert keys_of(folder) == ["tasks[0].slug"]


def test_bad_gold_is_refused_with_the_scorers_problems(tmp_path: Path) -> None:
    bad = TSV_HEADER + "A sentence.\t2\t\t\td1\tu1\ten\n"
    folder = write_bundle(tmp_path, make_bundle(), {"data/gold.tsv": bad.encode()})
    problems = problems_of(folder)
    assert problems
    assert {key for key, _ in problems} == {GOLD}
    assert "line 2" in problems[0][1]


def test_derived_file_outside_public_files_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(
        tmp_path, make_bundle(tasks=[make_task(training_files=[{"derive": "inputs", "from": "gold"}])])
    )
    assert keys_of(folder) == ["tasks[0].training_files[0].derive"]


def test_file_entry_needs_exactly_one_source(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold={"path": "data/gold.tsv", "data": "gold.tsv"}))
    assert keys_of(folder) == [GOLD]


def test_two_files_with_one_name_are_refused(tmp_path: Path) -> None:
    files = [{"path": "data/gold.tsv"}, {"path": "data/gold.tsv"}]
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(training_files=files)]))
    assert keys_of(folder) == ["tasks[0].training_files[1]"]


@pytest.mark.parametrize("name", ["sub/train.tsv", ".hidden", ""])
def test_bad_file_name_is_refused(tmp_path: Path, name: str) -> None:
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(resources=[{"path": "data/gold.tsv", "name": name}])]))
    assert keys_of(folder) == ["tasks[0].resources[0].name"]


@pytest.mark.parametrize(("key", "value"), [("daily_limit", 0), ("total_limit", True), ("max_upload_bytes", "1 MB")])
def test_bad_limit_is_refused(tmp_path: Path, key: str, value: Any) -> None:
    folder = write_bundle(tmp_path, with_phase(**{key: value}))
    assert keys_of(folder) == [f"tasks[0].phases[0].{key}"]


@pytest.mark.parametrize(("key", "value"), [("visibility", "secret"), ("selection", "first")])
def test_bad_choice_is_refused(tmp_path: Path, key: str, value: str) -> None:
    folder = write_bundle(tmp_path, with_phase(**{key: value}))
    assert keys_of(folder) == [f"tasks[0].phases[0].{key}"]


def test_bad_participation_and_repeated_organizer_are_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, make_bundle(participation="invite", organizers=["ada", "ada"]))
    assert keys_of(folder) == ["organizers[1]", "participation"]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    bundle = make_bundle(
        slug="Demo",
        tasks=[make_task(scorer="nope", phases=[make_phase(gold={"path": "data/missing.tsv"}, selection="worst")])],
    )
    assert keys_of(write_bundle(tmp_path, bundle)) == [
        "slug",
        "tasks[0].scorer",
        GOLD,
        "tasks[0].phases[0].selection",
    ]


def test_repeated_yaml_key_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, "slug: demo\nslug: other\ntitle: Demo\ntasks: []\n")
    ((key, message),) = problems_of(folder)
    assert key == ""
    assert "line 2" in message and "'slug' appears twice" in message


def test_yaml_alias_is_refused(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, "slug: &s demo\ntitle: *s\ntasks: []\n")
    ((key, message),) = problems_of(folder)
    assert key == ""
    assert "aliases" in message


def test_document_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    assert problems_of(write_bundle(tmp_path, "- just\n- a list\n")) == [("", "expected a mapping, found a list")]


def test_missing_bundle_file_is_refused(tmp_path: Path) -> None:
    ((key, message),) = problems_of(tmp_path / "nowhere.yaml")
    assert key == ""
    assert "not found" in message


def test_error_names_every_problem_in_its_message(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path, with_phase(gold={"path": "data/missing.tsv"}))
    with pytest.raises(BundleError) as caught:
        load_bundle(folder)
    assert str(caught.value) == (
        "The bundle was refused: 1 problem.\n- tasks[0].phases[0].gold: file not found: data/missing.tsv"
    )
    assert caught.value.status == 422
    assert caught.value.to_dict() == {
        "error": "invalid_bundle",
        "detail": str(caught.value),
        "problems": [{"key": GOLD, "message": "file not found: data/missing.tsv"}],
        "total": 1,
    }
