"""A bundle's mistakes are refused, each under its key path, and all of them at once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.services.bundles.loader import load_bundle
from app.services.bundles.spec import BundleError
from tests.app.services.bundles.test_loader import (
    GOLD,
    GOLD_TSV,
    TSV_HEADER,
    keys_of,
    make_bundle,
    make_phase,
    make_task,
    problems_of,
    write_bundle,
)
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"


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


QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
CLASSES = b"id\tlabel\na\tyes\nb\tno\n"


def generic_task(scorer: str, options: dict[str, Any], gold: str) -> dict[str, Any]:
    return make_task(slug="generic", scorer=scorer, scorer_options=options, phases=[make_phase(gold={"path": gold})])


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        (
            generic_task("trec", {"measures": ["map", "P_10", "mapp"], "complete_queries": True}, "data/qrels.txt"),
            ("tasks[0].scorer_options.measures[2]", "unknown trec_eval measure 'mapp'"),
        ),
        (
            generic_task("trec", {"measures": ["map", "P_5", "map"], "complete_queries": True}, "data/qrels.txt"),
            ("tasks[0].scorer_options.measures[2]", "the measure 'map' is listed twice"),
        ),
        (
            generic_task("trec", {"relevance_level": 0, "complete_queries": True}, "data/qrels.txt"),
            ("tasks[0].scorer_options.relevance_level", "must be at least 1"),
        ),
        (
            generic_task("classification", {"average": "binary"}, "data/classes.tsv"),
            ("tasks[0].scorer_options.positive_label", "is needed when 'average' is 'binary'"),
        ),
        (
            generic_task("classification", {"group_by": ["doc", "doc"]}, "data/classes.tsv"),
            ("tasks[0].scorer_options.group_by", "must be a list of distinct column names"),
        ),
        (
            generic_task("regression", {"primary_metric": "auc"}, "data/classes.tsv"),
            ("tasks[0].scorer_options.primary_metric", "must be one of pearson, spearman"),
        ),
    ],
)
def test_a_bad_scorer_option_is_refused_under_its_key_path(
    tmp_path: Path, task: dict[str, Any], expected: tuple[str, str]
) -> None:
    files = {"data/qrels.txt": QRELS, "data/classes.tsv": CLASSES}
    folder = write_bundle(tmp_path, make_bundle(tasks=[make_task(), task]), files)
    [(key, message)] = problems_of(folder)
    assert key == expected[0].replace("tasks[0]", "tasks[1]")
    assert expected[1] in message


@pytest.mark.parametrize(
    ("options", "warned"),
    [
        ({}, True),
        ({"per_query": True, "reject_unknown_queries": True}, True),
        ({"complete_queries": True}, False),
        ({"require_all_queries": True}, False),
    ],
)
def test_a_trec_task_that_lets_a_run_leave_out_queries_loads_with_a_warning(
    tmp_path: Path, options: dict[str, Any], warned: bool
) -> None:
    task = generic_task("trec", options, "data/qrels.txt")
    folder = write_bundle(tmp_path, make_bundle(tasks=[task]), {"data/qrels.txt": QRELS})
    spec = load_bundle(folder)
    assert [t.slug for t in spec.tasks] == ["generic"]
    if not warned:
        assert spec.warnings == ()
        return
    [(key, message)] = spec.warnings
    assert key == "tasks[0].scorer_options.complete_queries"
    assert "leave out its hardest queries" in message and "complete_queries: true" in message


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


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("yes", "expected true or false, found text ('yes')"),
        (
            True,
            "the ids of svident-detection cannot be replaced; they can for famus-cdae, famus-sv, scier-ere, scier-re",
        ),
    ],
)
def test_opaque_ids_must_be_a_flag_of_a_scorer_whose_ids_can_be_replaced(
    tmp_path: Path, value: Any, message: str
) -> None:
    folder = write_bundle(tmp_path, with_phase(opaque_ids=value))
    assert problems_of(folder) == [("tasks[0].phases[0].opaque_ids", message)]


def test_intervals_are_a_flag_read_as_given(tmp_path: Path) -> None:
    folder = write_bundle(tmp_path / "off", with_phase(intervals=False))
    assert load_bundle(folder).tasks[0].phases[0].intervals is False
    folder = write_bundle(tmp_path / "bad", with_phase(intervals="off"))
    assert problems_of(folder) == [("tasks[0].phases[0].intervals", "expected true or false, found text ('off')")]


def test_a_program_phase_has_no_intervals_and_asking_for_them_is_refused(tmp_path: Path) -> None:
    """A scoring program scores a submission as a whole: there is nothing to resample."""
    folder = tmp_path / "program"
    shutil.copytree(EXAMPLES / "program", folder)
    [phase] = load_bundle(folder).tasks[0].phases
    assert phase.intervals is False
    bundle = yaml.safe_load((folder / "competition.yaml").read_text())
    bundle["tasks"][0]["phases"][0]["intervals"] = True
    (folder / "competition.yaml").write_text(yaml.safe_dump(bundle))
    assert problems_of(folder) == [
        ("tasks[0].phases[0].intervals", "program scores a submission as a whole: no units to resample")
    ]
