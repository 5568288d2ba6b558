"""Scoring programs (the ``program`` scorer of CodaLab and Codabench competitions) in a scoring job.

The job runs the program outside any transaction, like any scorer's computation, in the sandbox the
settings name (``PODIUM_PROGRAM_SANDBOX``) with the runtime of the bundle's image
(``PODIUM_PROGRAM_RUNTIMES``) and the phase's ``execution_time_limit``; then ``record`` stores how it
ran (``ProgramRun``: exit status, the ends of stdout and stderr, the sanitized detailed results) in
the transaction that stores the score or the failure.

Who pays for a failure:

- the program failed on the team's file (it exited non-zero, ran out of time or output, wrote no
  scores, not every leaderboard column, or a scores file or value Podium cannot read or store: too large,
  not finite, not a number, nested too deeply): the submission fails and counts against the team's limits,
  as the program judged the file. The team reads one plain sentence (``TEAM_FAILURE``), plus the end
  of the program's stderr where the phase allows it (``show_program_stderr``); organizers read the run.
- the program could not run (no sandbox on this worker, a runtime that is missing, a stored program
  or reference data that cannot be used) or the worker died: the platform's failure, the quota given
  back, the organizers told why (``steps.record_failure``), as for any scorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.config import Settings
from app.services.scoring import steps
from app.services.scoring.gold import ParsedGold
from app.services.scoring.steps import Claim
from app.services.scoring.validation import validate
from app.services.submissions.limits import Limits
from app.storage.models import ProgramRun
from codalab.archives import ArchiveProblem
from codalab.bundle import DEFAULT_TIME_LIMIT
from codalab.program import TEAM_FAILURE, ProgramOutcome, ProgramProblem
from sandbox import Limits as RunLimits
from sandbox import RuntimeProblem, SandboxUnavailable
from scorers import ScoreReport
from scorers.generic.program import ProgramEnvironment, ProgramFailed, ProgramScorer

#: How much of the end of stderr a team reads, where the phase allows it.
TEAM_STDERR_CHARS = 2000
#: How much of each log is stored for organizers.
LOG_CHARS = 64 * 1024


@dataclass(frozen=True)
class ProgramResult:
    """One run: the report when it gave scores, else ``outcome`` says why not; ``problem`` when it could not run."""

    outcome: ProgramOutcome | None
    report: ScoreReport | None = None
    problem: str | None = None


def runs_program(gold: ParsedGold) -> bool:
    return isinstance(gold.scorer, ProgramScorer)


def environment(settings: Settings, held: Claim) -> ProgramEnvironment:
    seconds = held.gold.time_limit or DEFAULT_TIME_LIMIT
    return ProgramEnvironment(
        runtimes=settings.runtime_table,
        isolation=settings.program_sandbox,
        limits=RunLimits(wall_seconds=seconds, require_cgroup=not settings.sandbox_allow_no_cgroup),
    )


def run(gold: ParsedGold, data: bytes, held: Claim, *, settings: Settings, limits: Limits) -> ProgramResult:
    """Run the phase's program on the submitted file (checked again as at upload); no database."""
    scorer = gold.scorer
    assert isinstance(scorer, ProgramScorer)
    submission = validate(gold, data, limits)
    try:
        outcome = scorer.run(gold.gold, submission, environment(settings, held))
    except SandboxUnavailable as exc:
        return ProgramResult(None, problem=f"The scoring program did not run: {exc}.")
    except (ProgramProblem, ArchiveProblem, RuntimeProblem) as exc:
        return ProgramResult(None, problem=f"The scoring program cannot be run as stored: {exc}.")
    try:
        return ProgramResult(outcome, scorer.report(scorer.scores(outcome)))
    except ProgramFailed as failed:
        return ProgramResult(failed.outcome)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")[-LOG_CHARS:].replace("\x00", "")


def team_message(outcome: ProgramOutcome, *, show_stderr: bool) -> str:
    """What the team reads: one plain sentence, and the end of stderr where the phase allows it."""
    message = outcome.failure if outcome.run is None and outcome.failure else TEAM_FAILURE
    if show_stderr and outcome.run is not None and outcome.run.stderr.strip():
        tail = _text(outcome.run.stderr)[-TEAM_STDERR_CHARS:]
        message += f"\n\nThe end of the program's error output:\n{tail}"
    return message


def _store_run(session: Session, held: Claim, outcome: ProgramOutcome, now: datetime) -> None:
    run = outcome.run
    values = {
        "submission_id": held.submission_id,
        "round": held.round,
        "exit_code": run.exit_code if run else None,
        "signal": run.signal if run else None,
        "timed_out": bool(run and run.timed_out),
        "output_exceeded": bool(run and run.output_exceeded),
        "wall_seconds": run.wall_seconds if run else 0.0,
        "outcome": outcome.detail or (f"The scoring program ran: {run.describe()}." if run else ""),
        "stdout": _text(run.stdout) if run else "",
        "stderr": _text(run.stderr) if run else "",
        "stdout_bytes": run.stdout_bytes if run else 0,
        "stderr_bytes": run.stderr_bytes if run else 0,
        "detailed_html": outcome.detailed_html,
        "created_at": now,
    }
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert(ProgramRun).values(**values).on_conflict_do_nothing(index_elements=["submission_id", "round"])
    )


def record(session: Session, held: Claim, result: ProgramResult, *, now: datetime) -> bool:
    """Store the run and the score, or the failure; ``False`` if another attempt took the round over."""
    if result.outcome is None:
        return steps.record_failure(session, held, now=now, organizer_message=result.problem or "")
    _store_run(session, held, result.outcome, now)
    if result.report is not None:
        return steps.record_score(session, held, result.report, now=now)
    return steps.record_failure(
        session,
        held,
        now=now,
        organizer_message=result.outcome.detail or TEAM_FAILURE,
        participant_message=team_message(result.outcome, show_stderr=held.gold.show_stderr),
        refund=False,
    )
