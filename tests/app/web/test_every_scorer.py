"""Every registered scorer through the real app: a phase of its example bundle, the phase's sample submission
(built from its public inputs), uploaded, scored, and the per-document exports and chart made from what was stored.

The scorers come from the registry and their data from ``examples/`` (``tests/scorers/examples.py``), so a
new scorer is driven through here once it has an example competition.
"""

from __future__ import annotations

import csv
import io

import pytest
from fastapi.testclient import TestClient

from app.services.bundles.loader import load_bundle
from app.services.competitions import catalog
from app.services.submissions.results import current_scores
from app.storage.db import Database
from app.storage.models import Submission
from scorers import PublicIds, Scorer, register, scorer_class, scorer_names, unregister
from tests.app.builders import make_competition, make_user
from tests.app.labels_scorer import LabelScorer
from tests.app.web.test_api import auth, wait
from tests.scorers.examples import example_phases
from tests.scorers.test_contract import PERFECT

EXAMPLES = example_phases()


@pytest.mark.parametrize("name", scorer_names())
def test_the_sample_of_every_scorer_is_scored_and_its_per_document_exports_have_its_rows(
    name: str, db: Database, client: TestClient
) -> None:
    example = EXAMPLES[name]
    with db.session() as session:
        make_user(session, "ada")
        catalog.create_competition(session, load_bundle(example.bundle))
        session.commit()
    headers = auth(db, "ada")
    api = f"/api/v1/competitions/{example.competition}/tasks/{example.task}/phases/{example.phase}"
    page = f"/c/{example.competition}/{example.task}/{example.phase}"
    described = scorer_class(name).describe(example.options)
    sample = client.get(f"{api}/sample")
    if described.raw_submission:
        # A scoring program's results are files only it knows: no sample, no link to one; its perfect results instead.
        assert f'href="{api}/sample"' not in client.get(page).text
        assert (sample.status_code, sample.json()["error"]) == (404, "no_sample")
        content = PERFECT[name][1](example.gold)[0]
    else:
        assert f'href="{api}/sample"' in client.get(page).text  # the phase page links to it
        assert sample.status_code == 200
        assert sample.headers["content-disposition"] == f'attachment; filename="sample-{described.submission_filename}"'
        content = sample.content
    files = {"file": (described.submission_filename, content, "application/octet-stream")}
    uploaded = client.post(f"{api}/submissions", headers=headers, files=files)
    assert uploaded.status_code == 202, uploaded.text
    wait(client)
    with db.session() as session:
        submission = session.query(Submission).one()
        assert submission.status == "scored", submission.organizer_message
        stored = current_scores(session, [submission.id], full=True)[submission.id].breakdown

    dimension = described.per_unit_breakdown
    if described.raw_submission:  # scored as a whole: no per-document rows, and no download offers them
        assert dimension is None and stored == {}
        return
    assert dimension is not None
    expected = {key: values[described.primary_metric] for key, values in stored[dimension].items()}
    assert expected, f"{name} stored no {dimension!r} rows"
    as_json = client.get(f"{page}/documents.json").json()
    assert as_json["dimension"] == dimension
    assert {row[dimension]: row["metrics"][described.primary_metric] for row in as_json["rows"]} == expected
    rows = list(csv.DictReader(io.StringIO(client.get(f"{page}/documents.csv").text)))
    assert {row[dimension]: float(row[described.primary_metric]) for row in rows} == pytest.approx(expected)
    chart = client.get(f"/submissions/{submission.id}/documents.svg")
    assert chart.status_code == 200
    assert all(key.encode() in chart.content for key in expected)  # one bar per document, labelled


class _NoSampleLabels(LabelScorer):
    """The test scorer without a sample submission (the default of ``Scorer.sample_submission``)."""

    name = "test-labels-unsampled"

    def sample_submission(self, public: PublicIds) -> bytes:
        return Scorer.sample_submission(self, public)


def test_a_scorer_that_cannot_build_a_sample_says_so(db: Database, client: TestClient) -> None:
    register(_NoSampleLabels)
    try:
        with db.session() as session:
            make_competition(session, scorer=_NoSampleLabels.name)
            session.commit()
        answer = client.get("/api/v1/competitions/comp/tasks/labels/phases/dev/sample")
    finally:
        unregister(_NoSampleLabels.name)
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "no_sample",
        "detail": "the scorer test-labels-unsampled cannot build a sample submission from the public inputs; "
        "see the submission format on the phase's page",
    }
