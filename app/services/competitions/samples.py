"""A phase's sample submission: a valid file in its submission format, built by the scorer from the phase's
public view alone (``Scorer.sample_submission``: every label 0, every document without a template...), and the
notes its scorer adds to the format from the same view (``Scorer.format_notes``: a FAMuS CDAE phase's largest
gold role, which a submission's cost is counted against).

It is what a newcomer uploads first to see the format accepted and scored. Built from the public view, it is
the same for any two golds with the same public inputs, so it tells nothing of the answers; the parsed gold
comes from the process's cache, as an upload's validation takes it. A code phase takes programs: its sample is
its starting kit, zipped (``code.starting_kit``); without one, ``NotFound`` says how a program is run.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.services.code.settings import CodeSettings
from app.services.competitions.catalog import get_phase
from app.services.errors import NotFound
from app.services.scoring.gold import GoldCache, gold_of, parsed_gold
from app.storage.blobs import read_blob
from app.storage.models import Phase
from scorers import NoSample, Scorer, ScorerError, scorer_class


@dataclass(frozen=True)
class Sample:
    filename: str
    data: bytes


def sample_submission(session: Session, cache: GoldCache, competition: str, task: str, phase: str) -> Sample:
    """The phase's sample file; ``NotFound`` saying why when its scorer cannot build one."""
    phase_row = get_phase(session, competition, task, phase)
    if phase_row.code is not None and not CodeSettings.of(phase_row.code).ingestion:
        return _program(session, phase_row, CodeSettings.of(phase_row.code))
    gold = parsed_gold(session, gold_of(session, phase_row.id), cache)
    try:
        data = gold.scorer.sample_submission(gold.public)
    except NoSample as exc:
        raise NotFound(f"{exc}; see the submission format on the phase's page", code="no_sample") from None
    return Sample(f"sample-{gold.scorer.submission_filename}", data)


def _program(session: Session, phase: Phase, code: CodeSettings) -> Sample:
    """The code phase's starting kit; ``NotFound`` saying how programs run where its bundle gave none."""
    kit = next((file for file in phase.files if file.name == code.starting_kit), None) if code.starting_kit else None
    if kit is None:
        raise NotFound(f"no starting kit: this phase takes programs: {code.convention()}", code="no_sample")
    return Sample(kit.name, read_blob(session, kit.blob_id))


def format_notes(session: Session, cache: GoldCache, phase: Phase) -> tuple[str, ...]:
    """What the phase's scorer tells participants with its format, from the public view alone; nothing (and no
    gold parsed for it) when the scorer has nothing to say or the gold cannot be read (scoring says why)."""
    try:
        if scorer_class(phase.task.scorer).format_notes is Scorer.format_notes:
            return ()
        gold = parsed_gold(session, gold_of(session, phase.id), cache)
    except ScorerError:
        return ()
    return tuple(gold.scorer.format_notes(gold.public))
