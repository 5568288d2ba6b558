"""Baseline runs as organizers see them: who may start and see them, what a start checks, cancelling,
the sweeper's list, and the progress arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from app.services.accounts.users import find_user
from app.services.baselines import runs, views
from app.services.baselines.job import RUN_BASELINE
from app.services.competitions import catalog
from app.services.errors import Conflict, Forbidden, InvalidInput, NotAuthenticated, NotFound
from app.services.jobs import dispatch
from app.services.jobs.kinds import QUEUE_KEY, JobKind
from app.storage.db import Database
from app.storage.models import BaselineRun, Phase, User
from tests.app.builders import make_competition, make_user
from tests.app.labels_baselines import NAME, LabelsCopy

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Sent:
    """A job queue that keeps what it was sent (in memory: it cannot fail to take a job)."""

    confirms_sends = False

    def __init__(self) -> None:
        self.jobs: list[tuple[str, int]] = []

    def enqueue(self, kind: JobKind, row_id: int) -> None:
        self.jobs.append((kind.name, row_id))


def setup(db: Database) -> None:
    """``olga`` organizes ``comp``, ``oscar`` organizes ``other``, ``ada`` takes part, ``root`` is a site admin."""
    with db.session() as session:
        make_user(session, "olga", organizer=True)
        make_user(session, "oscar", organizer=True)
        make_user(session, "ada")
        make_user(session, "root", admin=True)
        make_competition(session, organizers=("olga",))
        make_competition(session, "other", organizers=("oscar",))
        session.commit()


def phase_of(session: Any, competition: str = "comp") -> Phase:
    return catalog.get_phase(session, competition, "labels", "dev")


def user(session: Any, name: str) -> User:
    found = find_user(session, name)
    assert found is not None
    return found


def started(db: Database, by: str = "olga", **options: Any) -> int:
    with db.session() as session:
        run = runs.start_run(session, user(session, by), phase_of(session), NAME, options, now=T0)
        session.commit()
        return run.id


# -- the registry ------------------------------------------------------------------------------


def test_the_registry_lists_the_systems_for_a_scorer(system: type[LabelsCopy]) -> None:
    (described,) = runs.registry("test-labels")
    assert (described["name"], described["version"], described["scorers"]) == (NAME, "2", ["test-labels"])
    assert [o["name"] for o in described["options"]] == ["refuse", "crash", "invalid", "steps"]
    everything = [d["name"] for d in runs.registry()]
    assert {NAME, "svident-tfidf-lr", "famus-sv-lemma"} <= set(everything)


# -- starting ----------------------------------------------------------------------------------


def test_an_organizer_starts_a_run_and_the_job_is_sent_after_the_commit(db: Database, system: Any) -> None:
    setup(db)
    sent = Sent()
    with db.session(info={QUEUE_KEY: sent}) as session:
        run = runs.start_run(session, user(session, "olga"), phase_of(session), NAME, {"steps": 3}, now=T0)
        assert sent.jobs == []  # nothing leaves before the commit
        session.commit()
    assert sent.jobs == [("run_baseline", run.id)]
    assert (run.status, run.baseline, run.baseline_version, run.created_at) == ("queued", NAME, "2", T0)
    # The options are stored with every default filled in: the run records what ran.
    assert run.options == {"refuse": False, "crash": False, "invalid": False, "steps": 3}


def test_a_site_admin_may_start_a_run(db: Database, system: Any) -> None:
    setup(db)
    assert started(db, "root") > 0


@pytest.mark.parametrize("who", ["ada", "oscar"])
def test_a_participant_or_another_competitions_organizer_may_not_start_a_run(
    db: Database, system: Any, who: str
) -> None:
    setup(db)
    with db.session() as session, pytest.raises(Forbidden, match="only the organizers of 'comp'"):
        runs.start_run(session, user(session, who), phase_of(session), NAME)
    with db.session() as session, pytest.raises(NotAuthenticated):
        runs.start_run(session, None, phase_of(session), NAME)


@pytest.mark.parametrize(
    ("name", "options", "code", "message"),
    [
        ("no-such-system", {}, "unknown_baseline", "unknown baseline 'no-such-system'"),
        ("svident-tfidf-lr", {}, "invalid_input", "writes submissions for svident-detection, not for this task's"),
        (NAME, {"speed": 3}, "invalid_options", "unknown option(s) for baseline test-labels-copy: speed"),
        (NAME, {"steps": "many"}, "invalid_options", "option 'steps' of baseline test-labels-copy must be of type int"),
    ],
)
def test_a_start_is_refused_with_a_reason(
    db: Database, system: Any, name: str, options: dict[str, Any], code: str, message: str
) -> None:
    setup(db)
    with db.session() as session, pytest.raises(InvalidInput) as refused:
        runs.start_run(session, user(session, "olga"), phase_of(session), name, options)
    assert refused.value.code == code
    assert message in refused.value.problems[0]["message"]


def test_the_same_system_is_not_queued_twice_on_a_phase(db: Database, system: Any) -> None:
    setup(db)
    first = started(db)
    with (
        db.session() as session,
        pytest.raises(Conflict, match=f"already queued or running on this phase \\(run {first}"),
    ):
        runs.start_run(session, user(session, "olga"), phase_of(session), NAME)
    with db.session() as session:
        runs.request_cancel(session, user(session, "olga"), first)
        session.commit()
    assert started(db) != first  # once it ended, it may run again


# -- seeing runs -------------------------------------------------------------------------------


def test_only_the_competitions_organizers_see_its_runs(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    with db.session() as session:
        assert [r.id for r in runs.list_runs(session, user(session, "olga"), phase_of(session))] == [run_id]
        assert runs.get_run(session, user(session, "root"), run_id).id == run_id
        for who in ("ada", "oscar"):
            with pytest.raises(Forbidden):
                runs.list_runs(session, user(session, who), phase_of(session))
            # By id, someone else's run and a missing run get the same answer.
            with pytest.raises(NotFound, match=f"there is no baseline run {run_id} that you may see"):
                runs.get_run(session, user(session, who), run_id)
            with pytest.raises(NotFound):
                runs.request_cancel(session, user(session, who), run_id)
        with pytest.raises(NotFound):
            runs.get_run(session, user(session, "olga"), run_id + 1000)


def test_a_run_is_described_with_its_place_and_requester(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db, steps=5)
    with db.session() as session:
        shown = views.describe_run(session, runs.get_run(session, user(session, "olga"), run_id))
    assert (shown.competition, shown.task, shown.phase) == ("comp", "labels", "dev")
    assert (shown.baseline, shown.version, shown.title) == (NAME, "2", "Copy the training labels")
    assert (shown.status, shown.requested_by, shown.submission_id, shown.error) == ("queued", "olga", None, "")
    assert shown.progress == views.Progress(
        done=0, total=None, fraction=None, rate=None, eta_seconds=None, updated_at=None
    )


# -- cancelling --------------------------------------------------------------------------------


def test_a_queued_run_is_cancelled_at_once_and_a_finished_one_cannot_be(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    with db.session() as session:
        run = runs.request_cancel(session, user(session, "olga"), run_id, now=T0)
        session.commit()
    assert (run.status, run.cancel_requested, run.finished_at) == ("cancelled", True, T0)
    # Its log, empty until now, has the closing line every run's log ends with.
    assert run.log_tail == f"{T0:%H:%M:%S} cancelled, as an organizer asked, while no worker ran it\n"
    with db.session() as session, pytest.raises(Conflict, match="is cancelled; only a queued or running run"):
        runs.request_cancel(session, user(session, "olga"), run_id)


def test_a_running_run_is_only_asked_to_stop(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    with db.session() as session:
        session.execute(
            update(BaselineRun)
            .where(BaselineRun.id == run_id)
            .values(status="running", lease_expires_at=T0 + timedelta(seconds=30))
        )
        run = runs.request_cancel(session, user(session, "olga"), run_id, now=T0)
        session.commit()
    assert (run.status, run.cancel_requested) == ("running", True)  # its worker stops it


def test_a_running_run_whose_worker_died_is_cancelled_at_once(db: Database, system: Any) -> None:
    setup(db)
    run_id = started(db)
    with db.session() as session:
        session.execute(
            update(BaselineRun).where(BaselineRun.id == run_id).values(status="running", lease_expires_at=T0)
        )
        run = runs.request_cancel(session, user(session, "olga"), run_id, now=T0 + timedelta(seconds=1))
        session.commit()
    assert run.status == "cancelled"


# -- what a sweeper resumes ------------------------------------------------------------------------


def test_a_sweeper_resumes_the_queued_and_the_interrupted_runs(db: Database, system: Any) -> None:
    setup(db)
    queued = started(db)
    with db.session() as session:
        phase = phase_of(session)
        olga = user(session, "olga")
        live = BaselineRun(phase_id=phase.id, requested_by=olga.id, baseline="x", baseline_version="1")
        dead = BaselineRun(phase_id=phase.id, requested_by=olga.id, baseline="y", baseline_version="1")
        done = BaselineRun(phase_id=phase.id, requested_by=olga.id, baseline="z", baseline_version="1")
        live.status, live.lease_expires_at = "running", T0 + timedelta(seconds=30)
        dead.status, dead.lease_expires_at = "running", T0 - timedelta(seconds=1)
        done.status = "succeeded"
        session.add_all([live, dead, done])
        session.commit()
    with db.session() as session:
        assert dispatch.take_due(session, RUN_BASELINE, now=T0, requeue_after=timedelta(0)) == sorted([queued, dead.id])


# -- progress ----------------------------------------------------------------------------------


def test_rate_and_time_left_follow_from_the_last_report() -> None:
    # 50 of 250 units in the 20 s from the start to the last report: 2.5 units/s, and the 200 left
    # take 200 / 2.5 = 80 s.
    progress = views.progress_of(50, 250, T0, T0 + timedelta(seconds=20), running=True)
    assert (progress.fraction, progress.rate, progress.eta_seconds) == (0.2, 2.5, 80.0)


def test_without_units_done_there_is_no_rate_and_a_finished_run_has_no_time_left() -> None:
    assert views.progress_of(0, 250, T0, T0, running=True).rate is None
    assert views.progress_of(0, None, None, None, running=False).fraction is None
    finished = views.progress_of(10, 20, T0, T0 + timedelta(seconds=4), running=False)
    assert (finished.fraction, finished.rate, finished.eta_seconds) == (0.5, 2.5, None)  # 10 / 4 s
