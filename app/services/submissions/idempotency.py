"""Idempotent uploads: the same ``Idempotency-Key`` from the same user within a day makes one submission.

A client whose connection dropped after the server stored its upload cannot know whether it was
stored; sending it again with the same key returns the submission the first request made (same id,
same answer), never a second one, so nothing is scored or counted twice. The key is looked up
before anything else and again under the team's lock, just before the submission would be stored:
a second request that arrives while the first is still being checked waits for the lock, then finds
the first one's key. The primary key (user, key) makes a second row impossible even so. A key sent
with a different file or to another phase is refused (409): it names another upload.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session

from app.services.errors import Conflict, InvalidInput
from app.storage.models import Submission
from app.storage.models.operations import IdempotencyKey

#: How long a key names its upload; afterwards the same key makes a new submission.
KEY_LIFETIME = timedelta(hours=24)
MAX_KEY_LENGTH = 255


def checked_key(key: str | None) -> str | None:
    """The header's value, or ``None`` when none was sent; refuses an empty, overlong or non-ASCII key."""
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
        raise InvalidInput(
            "the Idempotency-Key header was refused",
            [{"where": "Idempotency-Key", "message": f"1 to {MAX_KEY_LENGTH} printable ASCII characters"}],
        )
    return key


def original(
    session: Session, user_id: int, key: str, *, phase_id: int, sha256: str, now: datetime
) -> Submission | None:
    """The submission an earlier request with this key made, or ``None`` if the key is new (or
    expired). Raises ``Conflict`` when the key came with another file or phase."""
    found = session.get(IdempotencyKey, (user_id, key), populate_existing=True)
    if found is None or found.created_at < now - KEY_LIFETIME:
        return None
    if found.phase_id != phase_id or found.sha256 != sha256:
        raise Conflict(
            "this Idempotency-Key was sent before with another upload (a different file or phase); "
            "use a new key for a new upload",
            code="idempotency_key_reused",
        )
    return session.get(Submission, found.submission_id)


def remember(session: Session, user_id: int, key: str, submission: Submission, *, now: datetime) -> None:
    """Record that ``key`` made ``submission`` (an expired use of the same key is forgotten first)."""
    session.execute(
        delete(IdempotencyKey).where(
            IdempotencyKey.user_id == user_id, IdempotencyKey.key == key, IdempotencyKey.created_at < now - KEY_LIFETIME
        )
    )
    session.add(
        IdempotencyKey(
            user_id=user_id,
            key=key,
            phase_id=submission.phase_id,
            sha256=submission.sha256,
            submission_id=submission.id,
            created_at=now,
        )
    )
    session.flush()
