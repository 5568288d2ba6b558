from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.services.accounts.access import may_participate
from app.services.accounts.users import find_user
from app.services.competitions import catalog, participation
from app.services.competitions.markdown import render_markdown
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.storage.db import Database
from app.storage.models import Blob, CompetitionOrganizer, PhaseFile, TaskFile
from tests.app.builders import competition_spec, make_user, phase_spec, utc
from tests.app.labels_scorer import LabelScorer


def test_a_spec_becomes_a_competition_with_tasks_phases_and_files(db: Database, labels: type[LabelScorer]) -> None:
    spec = competition_spec(phases=(phase_spec("dev", daily_limit=3), phase_spec("test", visibility="hidden")))
    with db.session() as session:
        olga = make_user(session, "olga")
        _, created = catalog.create_competition(session, spec, creator=olga)
        session.commit()
    assert created
    with db.session() as session:
        found = catalog.get_competition(session, "comp")
        (task,) = found.tasks
        assert (task.slug, task.scorer, [p.slug for p in task.phases]) == ("labels", "test-labels", ["dev", "test"])
        assert [p.daily_limit for p in task.phases] == [3, None]
        assert [p.visibility for p in task.phases] == ["public", "hidden"]
        assert session.scalar(select(CompetitionOrganizer.user_id)) == olga.id
        kinds = sorted(session.execute(select(TaskFile.kind, TaskFile.name)))
        assert kinds == [("resource", "secret-resource.bin"), ("training", "train.json")]
        assert session.scalar(select(func.count()).select_from(PhaseFile)) == 2
        # gold (shared by both phases and equal to the training file), inputs and resource: 3 contents
        assert session.scalar(select(func.count()).select_from(Blob)) == 3


def test_creating_twice_is_refused_or_skipped(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        first, _ = catalog.create_competition(session, competition_spec())
        again, created = catalog.create_competition(session, competition_spec(), if_exists="skip")
        assert (again.id, created) == (first.id, False)
        with pytest.raises(Conflict, match="exists already"):
            catalog.create_competition(session, competition_spec())


def test_unknown_organizers_are_named_by_key_path(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        make_user(session, "olga")
        with pytest.raises(InvalidInput) as refused:
            catalog.create_competition(session, competition_spec(organizers=("olga", "nobody")))
    assert refused.value.problems == [{"key": "organizers[1]", "message": "there is no user named 'nobody'"}]


def test_an_unknown_scorer_is_refused(db: Database) -> None:
    with db.session() as session, pytest.raises(InvalidInput) as refused:
        catalog.create_competition(session, competition_spec(scorer="no-such-scorer"))
    assert refused.value.problems[0]["key"] == "tasks[0].scorer"


def test_lookups_say_what_is_missing(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        catalog.create_competition(session, competition_spec())
        assert catalog.get_phase(session, "comp", "labels", "dev").slug == "dev"
        with pytest.raises(NotFound, match="no competition 'nope'"):
            catalog.get_phase(session, "nope", "labels", "dev")
        with pytest.raises(NotFound, match="has no task 'nope'"):
            catalog.get_phase(session, "comp", "nope", "dev")
        with pytest.raises(NotFound, match="has no phase 'nope'"):
            catalog.get_phase(session, "comp", "labels", "nope")


def test_a_phase_is_open_from_its_start_until_before_its_end(db: Database, labels: type[LabelScorer]) -> None:
    spec = competition_spec(phases=(phase_spec(starts_at=utc("2025-01-01T10:00Z"), ends_at=utc("2025-01-02T10:00Z")),))
    with db.session() as session:
        catalog.create_competition(session, spec)
        phase = catalog.get_phase(session, "comp", "labels", "dev")
        assert catalog.phase_state(phase, utc("2025-01-01T09:59Z")) == "upcoming"
        assert catalog.phase_state(phase, utc("2025-01-01T10:00Z")) == "open"
        assert catalog.phase_state(phase, utc("2025-01-02T09:59Z")) == "open"
        assert catalog.phase_state(phase, utc("2025-01-02T10:00Z")) == "closed"


def test_only_organizers_reveal_a_hidden_phase(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        make_user(session, "olga")
        ada = make_user(session, "ada")
        catalog.create_competition(
            session, competition_spec(organizers=("olga",), phases=(phase_spec(visibility="hidden"),))
        )
        phase = catalog.get_phase(session, "comp", "labels", "dev")
        assert not phase.metrics_public
        with pytest.raises(Forbidden):
            catalog.reveal_phase(session, ada, phase)
        olga = find_user(session, "olga")
        catalog.reveal_phase(session, olga, phase, now=utc("2025-05-01T00:00Z"))
        assert phase.metrics_public
        assert phase.revealed_at == utc("2025-05-01T00:00Z")


def test_approval_competitions_need_an_organizers_yes(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        olga = make_user(session, "olga")
        ada = make_user(session, "ada")
        competition, _ = catalog.create_competition(
            session, competition_spec(organizers=("olga",), participation="approval")
        )
        assert not may_participate(session, ada, competition)
        request = participation.request_participation(session, ada, competition)
        assert request.approved_at is None
        assert not may_participate(session, ada, competition)
        with pytest.raises(Forbidden):
            participation.approve_participant(session, ada, competition, "ada")
        participation.approve_participant(session, olga, competition, "ada")
        assert may_participate(session, ada, competition)


def test_markdown_is_rendered_without_raw_html() -> None:
    html = render_markdown("**bold** <script>alert(1)</script> [x](javascript:alert(1)) [ok](https://example.org)")
    assert "<strong>bold</strong>" in html
    assert "<script>" not in html
    assert 'href="javascript' not in html
    assert 'href="https://example.org"' in html
