"""The leaderboard as the API answers it, shaped from a ``BoardSnapshot``."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.services.boards.snapshot import BoardSnapshot
from leaderboard.ranking import Entry


class MetricOut(BaseModel):
    name: str
    meaning: str
    higher_is_better: bool


class EntryOut(BaseModel):
    rank: int
    team: str
    system: str
    metrics: dict[str, float]
    columns: dict[str, dict[str, dict[str, float]]]
    baseline: bool
    submitted_at: datetime
    submission_id: int
    scored_submissions: int

    @classmethod
    def of(cls, entry: Entry) -> EntryOut:
        c = entry.candidate
        return cls(
            rank=entry.rank,
            team=c.team,
            system=c.system,
            metrics=dict(c.metrics or {}),
            columns={dim: {key: dict(values) for key, values in rows.items()} for dim, rows in c.columns.items()},
            baseline=c.baseline,
            submitted_at=c.submitted_at,
            submission_id=c.submission_id,
            scored_submissions=entry.scored_submissions,
        )


class LeaderboardOut(BaseModel):
    competition: str
    task: str
    phase: str
    scorer: str
    primary_metric: str
    metrics: list[MetricOut]
    selection: str
    hidden: bool = Field(description="true while the phase's numbers are for organizers only")
    entries: list[EntryOut]

    @classmethod
    def of(cls, snapshot: BoardSnapshot) -> LeaderboardOut:
        """The snapshot's ranking as the API answers it (entries only where its viewers may see numbers)."""
        facts, described = snapshot.facts, snapshot.description
        return cls(
            competition=facts.competition,
            task=facts.task,
            phase=facts.phase,
            scorer=described.name,
            primary_metric=snapshot.rules.primary,
            metrics=[
                MetricOut(name=m.name, meaning=m.meaning, higher_is_better=m.higher_is_better)
                for m in described.metrics
            ],
            selection=facts.selection,
            hidden=not facts.metrics_public,
            entries=[EntryOut.of(entry) for entry in snapshot.entries],
        )
