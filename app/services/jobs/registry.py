"""Every kind of job Podium runs. The embedded pool, the Celery task, the sweepers and the metrics
read this list; each kind is declared next to its function (see ``app.services.jobs.kinds``)."""

from __future__ import annotations

from app.services.baselines.job import RUN_BASELINE
from app.services.code.job import RUN_CODE
from app.services.jobs.kinds import JobKind
from app.services.scoring.job import SCORE_SUBMISSION

KINDS: tuple[JobKind, ...] = (SCORE_SUBMISSION, RUN_BASELINE, RUN_CODE)


class UnknownJob(ValueError):
    """A job name no kind has (a message from another release of Podium, or a hand-made one)."""


def kind_named(name: str) -> JobKind:
    """The kind of job called ``name``."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise UnknownJob(f"no job named {name!r}; known jobs: {', '.join(kind.name for kind in KINDS)}")
