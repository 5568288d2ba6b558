"""Everything about a phase in one zip, for its organizers: every submitted file, every submission's
record with its current numbers and errors, and the leaderboard as the organizers see it.

The zip is written to a temporary file, one submitted file at a time, so a phase with thousands of
large submissions never has to fit in memory. The caller serves the file and deletes it.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tempfile
import zipfile
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.accounts.access import require_organizer
from app.services.boards.snapshot import compute_snapshot
from app.services.boards.staleness import generation
from app.services.submissions.results import current_scores, describe
from app.storage.blobs import open_blob
from app.storage.models import Phase, Submission, Team, User
from app.storage.stores import CHUNK
from leaderboard.exports import iso_utc, leaderboard_csv, safe_cell

FIELDS = (
    "id",
    "team",
    "baseline",
    "submitted_at",
    "method_name",
    "status",
    "scored_at",
    "original_name",
    "size",
    "sha256",
    "attempts",
    "scoring_round",
    "quota_refunded",
    "message",
    "organizer_message",
)


def archive_name(phase: Phase) -> str:
    task = phase.task
    return f"{task.competition.slug}-{task.slug}-{phase.slug}-everything.zip"


def _safe_name(name: str) -> str:
    """A file name that stays inside its folder of the zip, whatever the participant called it."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"
    return cleaned[:100]


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_utc(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _csv_row(record: dict[str, Any], metric_names: list[str]) -> list[str]:
    organizer = record["organizer"]
    values: dict[str, Any] = {
        **record,
        "organizer_message": organizer["message"],
        "attempts": organizer["attempts"],
        "scoring_round": organizer["scoring_round"],
        "quota_refunded": organizer["quota_refunded"],
    }
    out = []
    for name in FIELDS:
        value = values.get(name)
        if isinstance(value, datetime):
            out.append(iso_utc(value))
        elif isinstance(value, bool):
            out.append("true" if value else "false")
        elif value is None:
            out.append("")
        else:
            out.append(safe_cell(str(value)))
    metrics = record.get("metrics") or {}
    out += ["" if metrics.get(m) is None else repr(float(metrics[m])) for m in metric_names]
    return out


def write_phase_archive(session: Session, user: User | None, phase: Phase, folder: Path | None = None) -> Path:
    """A zip of the phase for its organizers (others are refused); returns the temporary file's path."""
    require_organizer(session, user, phase.task.competition)
    rows = session.execute(
        select(Submission, Team.name)
        .outerjoin(Team, Team.id == Submission.team_id)
        .where(Submission.phase_id == phase.id)
        .order_by(Submission.created_at, Submission.id)
    ).all()
    submissions = list(rows)
    scores = current_scores(session, (s.id for s, _ in submissions), full=True)
    records = [
        asdict(describe(s, scores.get(s.id), phase=phase, organizer=True, team_name=name, detail=True))
        for s, name in submissions
    ]
    metric_names = sorted({m for r in records for m in (r.get("metrics") or {})})
    snapshot = compute_snapshot(session, phase, "organizers", generation.value)

    handle = tempfile.NamedTemporaryFile(prefix="podium-", suffix=".zip", dir=folder, delete=False)  # noqa: SIM115
    path = Path(handle.name)
    try:
        with handle, zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            table = io.StringIO()
            writer = csv.writer(table, lineterminator="\r\n")
            writer.writerow([*FIELDS, *metric_names])
            writer.writerows(_csv_row(r, metric_names) for r in records)
            archive.writestr("submissions.csv", table.getvalue())
            archive.writestr(
                "submissions.json",
                json.dumps({"submissions": records}, ensure_ascii=False, indent=2, default=_plain) + "\n",
            )
            board = leaderboard_csv(snapshot.description, snapshot.entries, uncertainty=snapshot.uncertainty)
            archive.writestr("leaderboard.csv", board)
            for submission, _ in submissions:
                name = f"files/{submission.id}-{_safe_name(submission.original_name)}"
                # Streamed from the store into the archive, so that large files are never held whole.
                with open_blob(session, submission.blob_id) as source, archive.open(name, "w") as target:
                    shutil.copyfileobj(source, target, CHUNK)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path
