"""A ladder board through the server: the bundle's ``board: ladder`` reaches the phase, the leaderboard page says
it is a ladder board and shows the ladder's scores, the API says ``board: ladder``, a team's submission page shows
no numbers of its own, and the per-document scores are not offered to the public."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.storage.db import Database
from tests.app.builders import HALF, PERFECT, phase_spec
from tests.app.services.boards.test_standings import QUARTER
from tests.app.web.test_pages import BOARD, login, setup, submission_id, submit, text, wait

API = "/api/v1/competitions/comp/tasks/labels/phases/dev"


def test_a_ladder_board_through_the_server(db: Database, client: TestClient) -> None:
    setup(db, "ada", "bob", phases=(phase_spec(board="ladder"),))
    login(client, "ada")
    submit(client, QUARTER)
    wait(client)
    half = submission_id(submit(client, HALF))  # +0.25 on 4 labels: not past the paired standard error (0.25)
    wait(client)
    own = client.get(f"/submissions/{half}")
    assert "This phase's board is a ladder" in text(own) and "50.00" not in text(own)
    login(client, "bob")
    submit(client, PERFECT)
    wait(client)
    client.cookies.clear()
    page = client.get(BOARD)
    assert "A ladder board: a team's score here changes only when a submission beats the score shown" in text(page)
    assert " 1 bob 100.00 " in text(page)
    assert " 2 ada 25.00 " in text(page)  # the ladder's score, not ada's 50.00
    assert client.get(f"{BOARD}/documents.csv").status_code == 404
    assert "documents.csv" not in page.text
    assert client.get(f"{API}/leaderboard").json()["board"] == "ladder"
    assert client.get(API).json()["board"] == "ladder"
