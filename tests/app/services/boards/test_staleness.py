"""What marks cached leaderboards stale: the generation bumped by commits, and a phase's fingerprint."""

from __future__ import annotations

from app.services.accounts.users import find_user
from app.services.boards.staleness import fingerprint, generation
from app.services.competitions import catalog
from app.services.submissions import changes
from app.storage.db import Database
from tests.app.builders import HALF, make_competition, make_user, phase_spec
from tests.app.labels_scorer import LabelScorer
from tests.app.services.boards.test_cache import REF, score, setup, upload


def test_commits_that_change_boards_bump_the_generation(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    before = generation.value
    submission = upload(db, HALF)
    assert generation.value == before  # a new queued submission changes no board
    score(db, submission)  # the claim, the score: each commit bumps
    assert generation.value > before


def test_a_rolled_back_change_does_not_bump(db: Database, labels: type[LabelScorer]) -> None:
    setup(db)
    before = generation.value
    with db.session() as session:
        catalog.get_phase(session, *REF).selection = "latest"
        session.flush()
        session.rollback()
    assert generation.value == before


def test_the_fingerprint_changes_with_scores_choices_and_reveals(db: Database, labels: type[LabelScorer]) -> None:
    with db.session() as session:
        make_user(session, "olga")
        make_user(session, "ada")
        make_competition(session, organizers=("olga",), phases=(phase_spec(visibility="hidden", selection="chosen"),))
        session.commit()

    def current() -> tuple[object, ...]:
        with db.session(read_only=True) as session:
            return fingerprint(session, catalog.get_phase(session, *REF).id)

    seen = [current()]
    submission = upload(db, HALF)
    seen.append(current())
    score(db, submission)
    seen.append(current())
    with db.session() as session:
        changes.choose(session, find_user(session, "ada"), submission)
        session.commit()
    seen.append(current())
    with db.session() as session:
        catalog.reveal_phase(session, find_user(session, "olga"), catalog.get_phase(session, *REF))
        session.commit()
    seen.append(current())
    assert len(set(seen)) == 5  # every step changed it
    assert current() == seen[-1]  # and nothing else does
