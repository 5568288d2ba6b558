"""Small builders for the application's tests: users, tokens, competitions, submissions."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy.orm import Session

from app.services.accounts import users
from app.services.bundles.spec import BundleFile, CompetitionSpec, PhaseSpec, TaskSpec
from app.services.competitions import catalog
from app.storage.models import Competition, User
from tests.app.labels_scorer import NAME as LABELS

PASSWORD = "correct horse battery"
#: Gold of the labels scorer: a perfect run scores 1, ``HALF`` scores 2/4 = 0.5.
GOLD = {"a": "x", "b": "y", "c": "x", "d": "y"}
PERFECT = dict(GOLD)
HALF = {"a": "x", "b": "y", "c": "y", "d": "x"}


def as_bytes(obj: Any) -> bytes:
    return json.dumps(obj).encode()


@lru_cache(maxsize=1)
def password_hash() -> str:
    return users.hash_password(PASSWORD)


def make_user(session: Session, name: str = "ada", *, organizer: bool = False, admin: bool = False) -> User:
    return users.create_user(
        session, name, PASSWORD, is_organizer=organizer, is_admin=admin, password_hash=password_hash()
    )


def bundle_file(name: str, data: bytes) -> BundleFile:
    return BundleFile(name=name, data=data, sha256=hashlib.sha256(data).hexdigest())


def phase_spec(slug: str = "dev", **overrides: Any) -> PhaseSpec:
    fields: dict[str, Any] = {
        "slug": slug,
        "title": f"Phase {slug}",
        "description": "",
        "starts_at": None,
        "ends_at": None,
        "gold": bundle_file("gold.json", as_bytes(GOLD)),
        "public_files": (bundle_file("inputs.txt", b"a\nb\nc\nd\n"),),
        "daily_limit": None,
        "total_limit": None,
        "visibility": "public",
        "selection": "best",
        "max_upload_bytes": None,
    }
    fields.update(overrides)
    return PhaseSpec(**fields)


def competition_spec(
    slug: str = "comp",
    *,
    phases: tuple[PhaseSpec, ...] | None = None,
    scorer: str = LABELS,
    scorer_options: dict[str, Any] | None = None,
    organizers: tuple[str, ...] = (),
    participation: str = "open",
    description: str = "A *test* competition.",
) -> CompetitionSpec:
    task = TaskSpec(
        slug="labels",
        title="Labels",
        description="Label each id.",
        scorer=scorer,
        scorer_options=scorer_options or {},
        training_files=(bundle_file("train.json", as_bytes(GOLD)),),
        resources=(bundle_file("secret-resource.bin", b"organizers only"),),
        phases=phases if phases is not None else (phase_spec(),),
    )
    return CompetitionSpec(
        slug=slug,
        title=f"Competition {slug}",
        description=description,
        organizers=organizers,
        participation=participation,
        tasks=(task,),
    )


def make_competition(session: Session, slug: str = "comp", **kwargs: Any) -> Competition:
    competition, _ = catalog.create_competition(session, competition_spec(slug, **kwargs))
    return competition


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text)
