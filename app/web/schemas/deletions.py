"""What the organizers' and admins' deletions answer."""

from __future__ import annotations

from pydantic import BaseModel

from app.services.accounts.removal import UserRemoved
from app.services.competitions.removal import CompetitionRemoved
from app.services.submissions.clearing import Cleared


class CompetitionDeletedOut(BaseModel):
    """The competition is gone, with this many phases, submissions and teams; nothing of it is kept."""

    competition: str
    phases: int
    submissions: int
    teams: int

    @classmethod
    def of(cls, removed: CompetitionRemoved) -> CompetitionDeletedOut:
        return cls(
            competition=removed.competition, phases=removed.phases, submissions=removed.submissions, teams=removed.teams
        )


class SubmissionsDeletedOut(BaseModel):
    """How many submissions went; those a revealed board's final ranking shows stayed (``kept_for_record``), and
    so did those a worker held (``busy``: ask again once they ended)."""

    deleted: int
    kept_for_record: list[int]
    busy: list[int]

    @classmethod
    def of(cls, cleared: Cleared) -> SubmissionsDeletedOut:
        return cls(deleted=cleared.deleted, kept_for_record=cleared.kept_for_record, busy=cleared.busy)


class UserDeletedOut(BaseModel):
    """The account is deleted: ``user`` is the placeholder it is shown as where boards keep it. Teams it left,
    teams deleted with it, memberships kept for a revealed board, submissions deleted and kept, tokens revoked."""

    user: str
    teams_left: int
    teams_deleted: int
    memberships_kept: int
    submissions_deleted: int
    submissions_kept: int
    tokens_revoked: int

    @classmethod
    def of(cls, removed: UserRemoved) -> UserDeletedOut:
        return cls(**removed.__dict__)
