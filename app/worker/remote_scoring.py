"""A remote worker's scoring: a submission of a phase that sends its program scoring to the worker's queue
(``app.services.workers.scoring``), scored as the platform's scoring job scores one (``scoring.programs``).

The worker fetches the submitted file and the phase's gold (its scoring program and reference data) through the
links it was given, checks the file as an upload is checked, runs the program with the phase's scorer
(``scorers.generic.program``: the sandbox, runtime table and cgroup rule of this machine's settings, the phase's
time limit) while a thread renews the lease, and reports what the program wrote (``ScoringReport``), the ends of
its logs and its detailed results. The platform reads the scores through the phase's columns and stores them. A
machine whose sandbox cannot run programs gives the submission back and stops, as for a code run.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict
from typing import Any, Protocol

import httpx

from app.config import Settings
from app.services.workers.report import ScoringReport
from codalab.archives import ArchiveProblem
from codalab.program import ProgramOutcome, ProgramProblem
from sandbox import Limits, RuntimeProblem, SandboxUnavailable
from scorers import ScorerError, get_scorer
from scorers.generic.program import ProgramEnvironment, ProgramScorer

log = logging.getLogger(__name__)

PREFIX = "/api/v1/worker/scorings"


class RemoteWorker(Protocol):
    """What of ``app.worker.remote.RemoteWorker`` a scoring uses."""

    settings: Settings
    stopping: threading.Event
    broken: str | None

    def _call(self, method: str, url: str, **kwargs: Any) -> httpx.Response: ...

    def heartbeats(self, url: str, what: str, lease: str, lease_seconds: float, done: threading.Event) -> None: ...


def report_of(outcome: ProgramOutcome) -> ScoringReport:
    run = outcome.run
    facts: dict[str, Any] = {"ran": False} if run is None else ScoringReport.of(run)
    return ScoringReport(
        scores=dict(outcome.scores),
        ignored=dict(outcome.ignored),
        failure=outcome.failure,
        detail=outcome.detail,
        **facts,
    )


def _score(worker: RemoteWorker, job: dict[str, Any], gold: bytes, submission: bytes) -> ProgramOutcome:
    scorer = get_scorer("program", job["scorer_options"])
    assert isinstance(scorer, ProgramScorer)
    settings = worker.settings
    environment = ProgramEnvironment(
        runtimes=settings.runtime_table,
        isolation=settings.program_sandbox,
        limits=Limits(wall_seconds=job["time_limit"], require_cgroup=not settings.sandbox_allow_no_cgroup),
    )
    checked = scorer.parse_submission(submission, scorer.public_view(parsed := scorer.parse_gold(gold)))
    return scorer.run(parsed, checked, environment)


def score_one(worker: RemoteWorker, job: dict[str, Any]) -> None:
    """Score one submission and report it; ``LeaseLost`` when the platform no longer takes this attempt's
    report."""
    submission_id, lease = job["submission_id"], job["lease"]
    log.info("scoring submission %s", submission_id)
    gold = worker._call("GET", job["gold_url"]).content
    submission = worker._call("GET", job["submission_url"]).content
    done = threading.Event()

    url, what = f"{PREFIX}/{submission_id}/heartbeat", f"submission {submission_id}"
    beats = threading.Thread(target=worker.heartbeats, args=(url, what, lease, job["lease_seconds"], done), daemon=True)
    beats.start()
    files: dict[str, tuple[str, bytes]] = {"stdout": ("stdout", b""), "stderr": ("stderr", b"")}
    try:
        try:
            outcome = _score(worker, job, gold, submission)
            report = report_of(outcome)
            run = outcome.run
            files = {"stdout": ("stdout", run.stdout if run else b""), "stderr": ("stderr", run.stderr if run else b"")}
            if outcome.detailed_html:
                files["detailed"] = ("detailed.html", outcome.detailed_html.encode("utf-8"))
        except SandboxUnavailable as exc:
            report = ScoringReport(cannot_run=str(exc)[:1000])
            worker.broken = str(exc)
            worker.stopping.set()
            log.error("this machine's sandbox cannot run programs (%s); the submission goes back to its queue", exc)
        except (ProgramProblem, ArchiveProblem, RuntimeProblem, ScorerError) as exc:
            report = ScoringReport(problem=str(exc)[:1000])
    finally:
        done.set()
        beats.join()
    form = {"lease": lease, "report": json.dumps(asdict(report))}
    answer = worker._call("POST", f"{PREFIX}/{submission_id}/result", data=form, files=files)
    log.info("submission %s: %s", submission_id, answer.json()["status"])
