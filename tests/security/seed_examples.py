"""Every registered scorer's example gold, from the open bundles in ``examples/``, and a valid submission
for it (the contract test's perfect builder), so hostile files can be made from real ones; and the
example competitions with their demo accounts (``podium demo``) in a test database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import yaml
from sqlalchemy import select

from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog, demo
from app.storage.db import Database
from app.storage.models import Base, User
from scorers import scorer_names
from tests.conftest import ROOT
from tests.scorers.test_contract import PERFECT

EXAMPLES = ROOT / "examples"


@dataclass(frozen=True)
class Example:
    """A phase of an example bundle that a scorer checks, with its gold and a valid submission."""

    scorer: str
    ref: tuple[str, str, str]
    gold: bytes
    submission: bytes

    @property
    def path(self) -> str:
        """The phase's part of API paths: ``competitions/c/tasks/t/phases/p``."""
        competition, task, phase = self.ref
        return f"competitions/{competition}/tasks/{task}/phases/{phase}"


@cache
def examples() -> dict[str, Example]:
    """The first open, always-open phase of each scorer in the example bundles, by scorer name."""
    found: dict[str, Example] = {}
    for bundle in sorted(EXAMPLES.glob("*/competition.yaml")):
        spec = yaml.safe_load(bundle.read_text(encoding="utf-8"))
        if spec.get("participation", "open") != "open":
            continue
        for task in spec["tasks"]:
            scorer = task["scorer"]
            phases = [p for p in task["phases"] if not p.get("starts_at") and not p.get("ends_at")]
            if scorer in found or not phases:
                continue
            gold = (bundle.parent / phases[0]["gold"]["path"]).read_bytes()
            submission, _ = PERFECT[scorer][1](gold)
            found[scorer] = Example(scorer, (spec["slug"], task["slug"], phases[0]["slug"]), gold, submission)
    return found


def example(scorer: str) -> Example:
    """The example of one scorer; a registered scorer without one fails here, naming what to add."""
    try:
        return examples()[scorer]
    except KeyError:
        raise AssertionError(
            f"no open example bundle in {EXAMPLES} uses the scorer {scorer!r}; add one with a small gold"
        ) from None


def seed_scorers() -> list[str]:
    """The registered scorers that tests must cover (test scorers registered by other tests excluded)."""
    return [name for name in scorer_names() if not name.startswith("test-")]


@contextmanager
def demo_competitions(database: Database) -> Iterator[dict[str, str]]:
    """The example competitions and demo accounts in the migrated ``database``, removed afterwards
    (the database is the test session's, shared with other tests); yields the tokens by role."""
    with database.session() as session:
        report = demo.seed(session, EXAMPLES, None)
        # The example bundles that `podium demo` does not load are loaded too: every example is a target.
        loaded = {bundle.resolve() for bundle in demo.bundles(EXAMPLES, None)}
        creator = session.scalar(select(User).where(User.name == report.accounts[0].name))
        for bundle in sorted(EXAMPLES.glob("*/competition.yaml")):
            if bundle.resolve() not in loaded:
                catalog.create_competition(session, load_bundle(bundle, None), creator=creator, if_exists="skip")
        session.commit()
    try:
        yield {account.role: account.token for account in report.accounts}
    finally:
        with database.engine.begin() as connection:
            for table in reversed(Base.metadata.sorted_tables):
                connection.execute(table.delete())
