"""Deleting frees each store: once a competition and an account are deleted, a collector pass removes from the
database's rows, the disk folder and the S3 bucket every content only they named, and keeps what another
competition still names."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.services.accounts.removal import delete_user
from app.services.competitions.removal import delete_competition
from app.storage import collect
from app.storage.blobs import put_blob
from app.storage.db import Database
from app.storage.models import Blob, Submission, Team, TeamMember
from tests.app.builders import as_bytes, bundle_file, make_competition, make_user, phase_spec

OWN_GOLD = bundle_file("gold.json", as_bytes({"a": "x", "b": "x", "c": "y", "d": "y"}))
UPLOAD = b'{"a": "y", "b": "y", "c": "y", "d": "y"}'


def _contents_of(db: Database, digest: str, store: str) -> bytes | None:
    with db.session(read_only=True) as session:
        try:
            with db.blobs.get(store).open(session, digest) as stream:
                return stream.read()
        except LookupError:
            return None


def test_a_deleted_competitions_and_accounts_files_leave_each_store(store_db: Database) -> None:
    with store_db.session() as session:
        root = make_user(session, "root", admin=True)
        ada = make_user(session, "ada")
        make_competition(session, "comp", phases=(phase_spec(gold=OWN_GOLD),))
        other = make_competition(session, "other")  # the same training and input files, another gold
        # ada's team of one in "other" with an upload of hers, never revealed: it goes with her account.
        phase_id = other.tasks[0].phases[0].id
        team = Team(competition_id=other.id, name="ada", invite_code="x" * 16, is_solo=True)
        session.add(team)
        session.flush()
        session.add(TeamMember(team_id=team.id, user_id=ada.id, competition_id=team.competition_id))
        blob = put_blob(session, UPLOAD)
        session.add(
            Submission(
                phase_id=phase_id,
                team_id=team.id,
                user_id=ada.id,
                blob_id=blob.id,
                sha256=blob.sha256,
                size=blob.size,
                original_name="run.json",
                status="scored",
            )
        )
        session.commit()
        stored = {b.sha256: b.store for b in session.scalars(select(Blob))}
        delete_competition(session, root, "comp")
        delete_user(session, root, "ada")
        session.commit()
    assert _contents_of(store_db, OWN_GOLD.sha256, stored[OWN_GOLD.sha256]) == OWN_GOLD.data

    removed = collect.collect(store_db, grace=timedelta(0))
    assert removed == collect.Collected(2, len(OWN_GOLD.data) + len(UPLOAD))
    assert _contents_of(store_db, OWN_GOLD.sha256, stored[OWN_GOLD.sha256]) is None
    assert _contents_of(store_db, blob.sha256, stored[blob.sha256]) is None
    with store_db.session(read_only=True) as session:
        left = {b.sha256 for b in session.scalars(select(Blob))}
    assert left == set(stored) - {OWN_GOLD.sha256, blob.sha256}
    for digest in left:  # what the other competition names is still there, in its store
        assert _contents_of(store_db, digest, stored[digest]) is not None


@pytest.fixture(autouse=True)
def _scorer(labels: object) -> None:
    """The competitions' scorer, registered."""
