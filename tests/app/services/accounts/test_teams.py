from __future__ import annotations

import pytest

from app.services.accounts import teams
from app.services.errors import Conflict, NotFound
from app.storage.db import Database
from app.storage.models import Submission
from tests.app.builders import make_competition, make_user
from tests.app.labels_scorer import LabelScorer


def test_a_user_without_a_team_gets_a_team_of_one_named_after_them(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        ada = make_user(session, "ada")
        competition = make_competition(session)
        team = teams.ensure_team(session, ada, competition.id)
        assert (team.name, team.is_solo, [m.name for m in teams.members(session, team)]) == ("ada", True, ["ada"])
        assert teams.ensure_team(session, ada, competition.id).id == team.id


def test_a_team_of_one_avoids_a_taken_name(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        bob = make_user(session, "bob")
        ada = make_user(session, "ada")
        competition = make_competition(session)
        teams.create_team(session, bob, competition, "ADA")
        assert teams.ensure_team(session, ada, competition.id).name == "ada-2"


def test_founding_and_joining_a_team(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        ada, bob, cy = (make_user(session, name) for name in ("ada", "bob", "cy"))
        competition = make_competition(session)
        teams.ensure_team(session, bob, competition.id)  # bob's team of one, never used: dropped on joining
        owls = teams.create_team(session, ada, competition, " Owls ")
        assert owls.name == "Owls"
        assert teams.join_team(session, bob, competition, owls.invite_code).id == owls.id
        assert [m.name for m in teams.members(session, owls)] == ["ada", "bob"]
        with pytest.raises(Conflict, match="already in the team 'Owls'"):
            teams.create_team(session, bob, competition, "Larks")
        with pytest.raises(Conflict, match="taken"):
            teams.create_team(session, cy, competition, "owls")
        with pytest.raises(NotFound):
            teams.join_team(session, cy, competition, "not-a-code")


def test_a_team_of_one_that_submitted_cannot_move(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        ada, bob = make_user(session, "ada"), make_user(session, "bob")
        competition = make_competition(session)
        solo = teams.ensure_team(session, bob, competition.id)
        phase = competition.tasks[0].phases[0]
        session.add(
            Submission(
                phase_id=phase.id,
                team_id=solo.id,
                blob_id=phase.gold_blob_id,
                sha256="0" * 64,
                size=1,
                original_name="x",
            )
        )
        owls = teams.create_team(session, ada, competition, "Owls")
        with pytest.raises(Conflict, match="cannot move to another team"):
            teams.join_team(session, bob, competition, owls.invite_code)
