"""What a scorer tells participants with a phase's format (``Scorer.format_notes``), from the public view: a FAMuS
CDAE phase publishes its largest gold role, which a submission's cost is counted against, on the submit page and in
the phase's API answer; a scorer with nothing to say adds nothing."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.storage.db import Database
from scorers import get_scorer
from tests.app.builders import make_user
from tests.app.web.test_pages import login, text
from tests.scorers.examples import example_phases

EXAMPLES = example_phases()


def _online(db: Database, *names: str) -> None:
    with db.session() as session:
        make_user(session, "ada")
        for name in names:
            catalog.create_competition(session, load_bundle(EXAMPLES[name].bundle))
        session.commit()


def test_a_cdae_phase_publishes_its_largest_gold_role_with_its_format(db: Database, client: TestClient) -> None:
    example = EXAMPLES["famus-cdae"]
    _online(db, "famus-cdae")
    scorer = get_scorer("famus-cdae", example.options)
    public = scorer.public_view(scorer.parse_gold(example.gold))
    (note,) = scorer.format_notes(public)
    mentions, tokens = public.largest_role
    assert f"holds {mentions} mention" in note and f"of {tokens} token" in note
    api = f"/api/v1/competitions/{example.competition}/tasks/{example.task}/phases/{example.phase}"
    assert client.get(api).json()["format_notes"] == [note]
    # The task's list of phases does not parse each phase's gold for it.
    task = client.get(f"/api/v1/competitions/{example.competition}/tasks/{example.task}").json()
    assert {phase["slug"]: phase["format_notes"] for phase in task["phases"]}[example.phase] == []
    login(client, "ada")
    assert note in html.unescape(text(client.get(f"/c/{example.competition}/{example.task}/{example.phase}/submit")))


def test_a_scorer_with_nothing_to_say_adds_no_note(db: Database, client: TestClient) -> None:
    example = EXAMPLES["famus-sv"]
    _online(db, "famus-sv")
    api = f"/api/v1/competitions/{example.competition}/tasks/{example.task}/phases/{example.phase}"
    assert client.get(api).json()["format_notes"] == []
    login(client, "ada")
    page = text(client.get(f"/c/{example.competition}/{example.task}/{example.phase}/submit"))
    assert "Format:" in page and "largest role" not in page
