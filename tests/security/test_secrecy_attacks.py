"""The two scorer-side attacks on the gold's secrecy, replayed against a real ``podium serve``.

A refusal costs a participant nothing, so a refusal that depends on the answers is a free question to the
gold. Both attacks worked once:

1. **SV-Ident enumeration.** Uploading ``{}`` (or part of the test sentences) to the disambiguation task was
   refused with the list of the uuids that were "queries", that is, the sentences whose detection label is 1:
   a handful of free refusals gave away the detection answers.
2. **FAMuS CDAE cost oracle.** A file near the size budget was refused with "would cost N string comparisons",
   N counting the gold mentions of each role the file filled: moving the number of fillers told, role by
   role, how many gold mentions a document has. The count now takes the phase's largest gold role, one figure
   the phase publishes with its format, for every role.

Here an organizer puts a competition online through the API whose phases ``a`` and ``b`` publish the same
inputs (sentences, docids, the largest CDAE gold role) with different answers, and a participant attacks both.
Each upload of the enumeration is accepted and scored, and no answer names a sentence; the cost probes get the
same answer, byte for byte, from both phases, and the refusal's number is what the submission costs against the
published figure.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from app.storage.db import Database
from tests.scorers.tasks.svident_data import make_gold
from tests.security.live_server import TIMEOUT, LiveServer, serve, wait_scored

pytestmark = pytest.mark.slow

PHASES = ("a", "b")
#: The test sentences both phases publish: (uuid, lang, doc_id).
SENTENCES = [(f"sent-{k:02d}-{'abcdefgh'[k % 8]}", ("en", "de")[k % 2], f"doc{k % 3}") for k in range(24)]
UUIDS = [uuid for uuid, _, _ in SENTENCES]


def _svident_gold(seed: int) -> bytes:
    """The sentences with answers of their own: about a third of them queries, other ones in each phase."""
    rng = random.Random(seed)
    rows = []
    for uuid, lang, doc in SENTENCES:
        query = rng.random() < 0.35
        variables = ";".join(rng.sample(["v1", "v2", "v3", "v4"], rng.randint(1, 3))) if query else ""
        rows.append((uuid, lang, doc, "1" if query else "0", variables))
    return make_gold(rows)


#: The CDAE instances both phases publish: docid, frame and role names, and the largest gold role (D2's Suspect:
#: 3 mentions of 6 tokens). Phase ``a``'s gold fills role Agent of D1 with one mention, phase ``b``'s with three;
#: the rest is alike.
def _cdae_gold(agents: int) -> bytes:
    suspects = [[["the man"]], [["a thief"]], [["his friend"]]]
    lines = [
        {
            "docid": "D1",
            "templates": [{"incident_type": "Hiring", "Agent": [[[f"person {i}"]] for i in range(agents)]}],
        },
        {
            "docid": "D2",
            "templates": [{"incident_type": "Arrest", "Agent": [[["the police"]]], "Suspect": suspects, "Time": []}],
        },
    ]
    return "\n".join(json.dumps(line) for line in lines).encode()


#: A budget small enough that the probes below stay small files.
CDAE_OPTIONS = {"max_comparisons": 400}


def _bundle() -> bytes:
    inputs = [{"derive": "inputs", "from": "gold"}]

    def phases(prefix: str, extension: str) -> list[dict[str, Any]]:
        return [
            {
                "slug": p,
                "title": p.upper(),
                "gold": {"path": f"{prefix}-{p}.{extension}"},
                "public_files": [dict(entry) for entry in inputs],
            }
            for p in PHASES
        ]

    spec = {
        "slug": "secrecy",
        "title": "Secrecy attacks",
        "tasks": [
            {
                "slug": "disambiguation",
                "title": "Disambiguation",
                "scorer": "svident-disambiguation",
                "phases": phases("svident", "tsv"),
            },
            {
                "slug": "cdae",
                "title": "CDAE",
                "scorer": "famus-cdae",
                "scorer_options": CDAE_OPTIONS,
                "phases": phases("cdae", "jsonl"),
            },
        ],
    }
    files = {
        "competition.yaml": yaml.safe_dump(spec).encode(),
        "svident-a.tsv": _svident_gold(1),
        "svident-b.tsv": _svident_gold(2),
        "cdae-a.jsonl": _cdae_gold(1),
        "cdae-b.jsonl": _cdae_gold(3),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def server(migrated: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(migrated, tmp_path_factory.mktemp("secrecy")) as server:
        organizer = {"Authorization": f"Bearer {server.organizer_token}"}
        created = httpx.post(
            server.api("competitions"), headers=organizer, files={"bundle": ("bundle.zip", _bundle())}, timeout=TIMEOUT
        )
        assert created.status_code == 201, created.text
        yield server


def send(server: LiveServer, task: str, phase: str, run: Any) -> httpx.Response:
    url = server.api(f"competitions/secrecy/tasks/{task}/phases/{phase}/submissions")
    return httpx.post(url, headers=server.auth(), files={"file": ("run.json", json.dumps(run))}, timeout=TIMEOUT)


def test_the_golds_differ_in_their_queries() -> None:
    """The premise: a refusal that named the queries would name different sentences in the two phases."""
    queries = [
        {row.split("\t")[5] for row in _svident_gold(seed).decode().splitlines()[1:] if row.split("\t")[1] == "1"}
        for seed in (1, 2)
    ]
    assert queries[0] and queries[1] and queries[0] != queries[1]


def test_the_svident_enumeration_learns_nothing(server: LiveServer) -> None:
    rng = random.Random(5)
    # {} and halves of the test sentences, each with an empty candidate list: the uploads the attack sent.
    probes: list[dict[str, Any]] = [{}] + [{u: {} for u in rng.sample(UUIDS, len(UUIDS) // 2)} for _ in range(4)]
    for run in probes:
        for phase in PHASES:
            answer = send(server, "disambiguation", phase, run)
            assert answer.status_code == 202, answer.text  # accepted: a left-out query is scored 0, not refused
            scored = wait_scored(server, answer.json()["id"])
            assert scored["status"] == "scored", scored
            assert set(scored["metrics"].values()) == {0.0}
            # No answer names a sentence: neither the upload's nor the scored submission's.
            texts = answer.text + json.dumps(scored)
            assert not [uuid for uuid in UUIDS if uuid in texts]


def _probe(fillers: int) -> dict[str, Any]:
    """A run that fills D1's Agent with ``fillers`` distinct one-word fillers and D2 not at all."""
    return {"D1": [{"incident_type": "Hiring", "Agent": [[f"w{i}"] for i in range(fillers)]}]}


def test_the_cdae_cost_oracle_learns_nothing(server: LiveServer) -> None:
    # The attack moves the number of fillers of one role across the budget and reads the answers. Both phases
    # must answer alike, and the refusal's count is the submission's own bound: the clean-up pairs n(n-1)/2 plus
    # n fillers times the mentions of the largest gold role, 3, which both phases publish alike.
    notes = [httpx.get(server.api(f"competitions/secrecy/tasks/cdae/phases/{p}"), timeout=TIMEOUT) for p in PHASES]
    assert notes[0].json()["format_notes"] == notes[1].json()["format_notes"]
    assert "largest role of this phase's gold in one document holds 3 mentions of 6 tokens" in notes[0].text
    answers: dict[str, list[tuple[int, Any]]] = {phase: [] for phase in PHASES}
    for fillers in range(23, 29):
        for phase in PHASES:
            answer = send(server, "cdae", phase, _probe(fillers))
            body = answer.json()
            answers[phase].append((answer.status_code, body if answer.status_code == 422 else None))
            cost = fillers * (fillers - 1) // 2 + 3 * fillers
            if cost > CDAE_OPTIONS["max_comparisons"]:
                assert answer.status_code == 422, answer.text
                assert f"would cost {cost} string comparisons" in body["problems"][0]["message"]
            else:
                assert answer.status_code == 202, answer.text
    assert answers["a"] == answers["b"]
    assert {status for status, _ in answers["a"]} == {202, 422}  # the probes straddle the budget


@pytest.mark.parametrize("task", ["disambiguation", "cdae"])
def test_the_sample_submission_is_the_same_for_golds_with_the_same_inputs(server: LiveServer, task: str) -> None:
    # Built from the public inputs alone: both phases give the same bytes, which name every published item.
    samples = [
        httpx.get(server.api(f"competitions/secrecy/tasks/{task}/phases/{phase}/sample"), timeout=TIMEOUT)
        for phase in PHASES
    ]
    assert [s.status_code for s in samples] == [200, 200]
    assert samples[0].content == samples[1].content
    assert set(json.loads(samples[0].content)) == (set(UUIDS) if task == "disambiguation" else {"D1", "D2"})
