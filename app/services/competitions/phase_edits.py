"""Organizers adjusting a phase after it is online: its window, limits, visibility, description, the
freeze and final submissions of a phase with a private split (``frozen_at``, ``final_submissions``), and its
boards (``board``: plain or ladder; ``boards``: the further boards, checked as the bundle's).

``edit_phase`` is the one way, used by ``PATCH /api/v1/.../phases/{p}`` and the phase's edit form.
A change is checked with the bundle's own rules (``bundles.checks``: UTC times to the minute, whole
limits of at least 1, the window's end after its start), refused as a whole with every problem named
by its field, and each setting that really changes is logged as a ``PhaseChange``: who, when, the
value before and after.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from app.services.accounts.access import require_organizer
from app.services.bundles.board_keys import read_boards
from app.services.bundles.checks import KeyPathChecker
from app.services.bundles.loader import BOARDS, VISIBILITY
from app.services.errors import InvalidInput
from app.storage.models import Phase, PhaseChange, User
from app.storage.types import utcnow
from scorers import Scorer, scorer_class

#: The settings an organizer may change, in the order the log and the form show them.
EDITABLE = (
    "starts_at",
    "ends_at",
    "daily_limit",
    "total_limit",
    "visibility",
    "description",
    "frozen_at",
    "final_submissions",
    "board",
    "boards",
)
#: Descriptions are Markdown shown on every page of the phase; this keeps one from filling the database.
MAX_DESCRIPTION = 100_000


def _as_text(value: object) -> str | None:
    """A setting's value as the log keeps it: times to the minute in UTC, numbers and words as written."""
    if value is None:
        return None
    if isinstance(value, list):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%MZ")
    return str(value)


def _read(phase: Phase, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The requested values, checked together with the window they make with the phase's other time;
    raises ``InvalidInput`` naming every bad field at once."""
    checker = KeyPathChecker()
    for key in changes:
        if key not in EDITABLE:
            checker.add(key, f"cannot be changed here; the settings that can are {', '.join(EDITABLE)}")
    wanted: dict[str, Any] = {}
    for key in ("starts_at", "ends_at", "frozen_at"):
        if key in changes:
            wanted[key] = checker.time(changes, key, "")
    for key in ("daily_limit", "total_limit", "final_submissions"):
        if key in changes:
            wanted[key] = checker.positive(changes, key, "")
    if wanted.get("final_submissions") is not None and phase.private_share is None:
        # As at import (``bundles.split_keys``): final submissions rank a private board.
        checker.add("final_submissions", "final submissions rank a private board: this phase has no private_share")
    if "visibility" in changes:
        if changes["visibility"] is None:
            checker.add("visibility", f"expected one of {', '.join(VISIBILITY)}; found nothing (null)")
        wanted["visibility"] = checker.choice(changes, "visibility", "", VISIBILITY)
    if "description" in changes:
        wanted["description"] = checker.text(changes, "description", "", optional=True)
        if len(wanted["description"]) > MAX_DESCRIPTION:
            checker.add("description", f"is longer than {MAX_DESCRIPTION} characters")
    if "board" in changes or "boards" in changes:
        _read_boards(phase, changes, checker, wanted)
    starts_at = wanted.get("starts_at", phase.starts_at)
    ends_at = wanted.get("ends_at", phase.ends_at)
    if starts_at is not None and ends_at is not None and ends_at <= starts_at:
        checker.add("ends_at" if "ends_at" in wanted else "starts_at", "the phase must end later than it starts")
    if checker.problems:
        raise InvalidInput(
            "the phase was not changed", [{"where": key, "message": message} for key, message in checker.problems]
        )
    return wanted


def _scorer(phase: Phase) -> Scorer[Any, Any, Any]:
    cls = scorer_class(phase.task.scorer)
    return cls(cls.resolve_options(phase.task.scorer_options or {}))


def _read_boards(phase: Phase, changes: Mapping[str, Any], checker: KeyPathChecker, wanted: dict[str, Any]) -> None:
    """``board`` and ``boards`` as the bundle's rules read them (``bundles.loader``, ``bundles.board_keys``)."""
    scorer = _scorer(phase)
    if "board" in changes:
        wanted["board"] = checker.choice(changes, "board", "", BOARDS)
        if wanted["board"] == "ladder" and scorer.raw_submission:
            checker.add("board", f"{scorer.name} scores a submission as a whole: no units to compare on")
    if "boards" in changes:
        wanted["boards"] = [b.to_dict() for b in read_boards(checker, dict(changes), "", scorer)] or None


def edit_phase(
    session: Session, user: User | None, phase: Phase, changes: Mapping[str, Any], now: datetime | None = None
) -> list[PhaseChange]:
    """Apply ``changes`` (any of ``EDITABLE``; ``None`` unsets a time or a limit) to the phase as one
    organizer's edit; returns the logged changes (none when every value was already so)."""
    organizer = require_organizer(session, user, phase.task.competition)
    wanted = _read(phase, changes)
    moment = now or utcnow()
    logged = []
    for key in EDITABLE:
        if key not in wanted:
            continue
        old, new = _as_text(getattr(phase, key)), _as_text(wanted[key])
        if old == new:
            continue
        setattr(phase, key, wanted[key])
        change = PhaseChange(
            phase_id=phase.id, user_id=organizer.id, changed_at=moment, field=key, old_value=old, new_value=new
        )
        session.add(change)
        logged.append(change)
    session.flush()
    return logged


def phase_changes(session: Session, user: User | None, phase: Phase) -> list[PhaseChange]:
    """The phase's log of changes, newest first (organizers only)."""
    require_organizer(session, user, phase.task.competition)
    query = (
        select(PhaseChange)
        .where(PhaseChange.phase_id == phase.id)
        .options(selectinload(PhaseChange.user))
        .order_by(PhaseChange.changed_at.desc(), PhaseChange.id.desc())
    )
    return list(session.scalars(query))
