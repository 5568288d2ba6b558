"""The gold of a phase scored by its organizers' program reaches a remote worker only through a scoring link, and
only while the attempt it was made for holds the submission on a queue the phase sends its scoring to. A code run's
link cannot be turned into one, a credential of another competition's queue is given nothing of this one, a phase
whose scoring went back to the platform gives its gold to no worker even one that still holds a submission, and
what the team sees of its submission is the same whatever the worker says about the gold."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from itsdangerous import URLSafeTimedSerializer

from app.config import Settings
from app.main import create_app
from app.services.competitions import catalog
from app.services.workers import links, queues
from app.storage.db import Database
from tests.app.builders import make_competition, make_user
from tests.app.test_programs import PHASE, TRUTH, program_phase
from tests.app.test_remote_scoring import WORKER, bearer, claim, scoring_queue, send
from tests.app.web.test_api import auth, setup
from tests.codalab import tiny


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_the_gold_goes_only_to_the_attempt_of_the_phases_own_queue(db: Database, client: TestClient) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    (secret,) = scoring_queue(client, db)
    with db.session() as session:  # another competition, its own queue and worker
        olga2 = make_user(session, "olga2", organizer=True)
        phases = (program_phase(),)
        make_competition(
            session, "other", organizers=("olga2",), phases=phases, scorer="program", scorer_options=tiny.OPTIONS
        )
        other = queues.create_queue(session, olga2, catalog.get_competition(session, "other"), "lab")
        stranger = queues.issue_credential(session, other).secret
        session.commit()
    sent = send(client, db, tiny.result(TRUTH))
    assert client.post(f"{WORKER}/claim", headers=bearer(stranger)).json() == {"run": None, "scoring": None}
    scoring = claim(client, secret)["scoring"]
    assert scoring["submission_id"] == sent["id"]
    # A link is the server's own: one made with another key, or for another file, is refused.
    token = scoring["gold_url"].rsplit("/", 1)[1]
    forged = URLSafeTimedSerializer(b"k" * 32, salt="podium-worker-link").dumps([links.SCORING, sent["id"], 1, "gold"])
    assert client.get(f"{WORKER}/files/{forged}").status_code == 403
    assert client.get(f"{WORKER}/files/{token[:-2]}xx").status_code == 403
    # The phase's scoring goes back to the platform while the worker holds the submission: no more gold for it.
    assert client.get(scoring["gold_url"]).status_code == 200
    back = client.put(f"{PHASE}/queue", headers=auth(db, "olga"), json={"queue": None})
    assert back.status_code == 200
    refused = client.get(scoring["gold_url"])
    assert refused.status_code == 409 and b"PK" not in refused.content


def test_what_the_team_sees_does_not_carry_what_the_worker_sent_beyond_the_scores(
    db: Database, client: TestClient
) -> None:
    setup(db, program_phase(), scorer="program", scorer_options=tiny.OPTIONS)
    (secret,) = scoring_queue(client, db)
    sent = send(client, db, tiny.result(TRUTH))
    scoring = claim(client, secret)["scoring"]
    leak = "a b a c (the gold, as a worker could echo it)"
    answer = client.post(
        f"{WORKER}/scorings/{sent['id']}/result",
        headers=bearer(secret),
        data={
            "lease": scoring["lease"],
            "report": '{"failure": "' + leak + '", "detail": "' + leak + '", "exit_code": 1}',
        },
        files={"stderr": ("stderr", leak.encode())},
    )
    assert answer.status_code == 200 and answer.json()["status"] == "failed", answer.text
    seen = client.get(f"/api/v1/submissions/{sent['id']}", headers=auth(db, "ada")).text
    assert "gold" not in seen and "a b a c" not in seen  # the team reads the platform's sentence only
    organizers = client.get(f"/api/v1/submissions/{sent['id']}", headers=auth(db, "olga")).text
    assert "a b a c" in organizers  # the organizers read their worker's logs
