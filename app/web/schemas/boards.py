"""The leaderboard as the API answers it, shaped from a ``BoardSnapshot``."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.services.boards.private import Move
from app.services.boards.snapshot import BoardSnapshot
from leaderboard.ranking import Entry
from leaderboard.uncertainty import BoardUncertainty


class MetricOut(BaseModel):
    name: str
    meaning: str
    higher_is_better: bool
    format: str = Field(description="percent (a fraction shown as a percentage) or number (shown as it is)")
    decimals: int | None = Field(None, description="decimals a number is shown with (null: up to four)")
    title: str = Field(description="what tables head its column with (a scoring program's column title, else name)")


class IntervalOut(BaseModel):
    """A confidence interval of the primary metric (as a fraction, like the metrics)."""

    low: float | None = Field(description="null when the metric is undefined on too many resamples")
    high: float | None
    level: float = Field(description="the confidence level, 0.95")
    method: str = Field(description="bca-expanded: BCa widened for small samples (leaderboard/bootstrap.py)")
    units: int = Field(description="how many documents (or groups) were resampled")
    few_units: bool = Field(description="fewer than 20 units: the interval says little")
    zero_width: bool = Field(
        description="every resample scored the same (one unit, identical units, perfect): no interval"
    )
    too_few_units: bool = Field(False, description="5 units or fewer: a rough interval, below its level's coverage")
    reliable: bool = Field(True, description="the interval is what its level says (not rough, zero width or unpooled)")
    label: str = Field("", description="what the interval is, in words (docs/STATISTICS.md)")
    notes: list[str] = Field(default_factory=list, description="its caveats: few_units, too_few_units, zero_width, ...")
    mc_error: float | None = Field(None, description="Monte Carlo standard error of the endpoints")
    selected_from: int = Field(1, description="widened for the choice of the best of this many submissions")


class ComparisonOut(BaseModel):
    """Is the entry ranked k significantly better than the one ranked k+1? Entries by submission id."""

    better: int
    worse: int
    p_value: float | None = Field(description="Holm-corrected over the board's comparisons; null if not comparable")
    significant: bool
    too_few_units: bool = Field(False, description="not compared: 5 units or fewer are too few to compare")
    method: str


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
    interval: IntervalOut | None = Field(None, description="the primary metric's 95% interval")
    tied_group: int | None = Field(None, description="entries of one group cannot be told apart; 1 is the top")

    @classmethod
    def of(cls, entry: Entry, uncertainty: BoardUncertainty[int] | None = None) -> EntryOut:
        c = entry.candidate
        interval = uncertainty.interval_dict(c.submission_id) if uncertainty else None
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
            interval=IntervalOut(**interval) if interval else None,
            tied_group=uncertainty.group_of(c.submission_id) if uncertainty else None,
        )


class MoveOut(BaseModel):
    """An entrant of a private board: its rank there and on the public board ("shake-up")."""

    rank: int
    team: str
    system: str
    baseline: bool
    submission_id: int
    metrics: dict[str, float] = Field(description="the private board's metrics of the submission that counts")
    columns: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict,
        description="its breakdown columns on the private board's units, as an entry's (empty for a score "
        "recorded before they were kept)",
    )
    public_rank: int | None = Field(description="its rank on the public board; null if it had no entry there")
    change: int | None = Field(description="places gained from the public board (negative: lost)")
    picked: bool = Field(description="it marked no final submission: its best ones on the public board count")

    @classmethod
    def of(cls, move: Move) -> MoveOut:
        c = move.entry.candidate
        return cls(
            rank=move.entry.rank,
            team=c.team,
            system=c.system,
            baseline=c.baseline,
            submission_id=c.submission_id,
            metrics=dict(c.metrics or {}),
            columns={dim: {key: dict(values) for key, values in rows.items()} for dim, rows in c.columns.items()},
            public_rank=move.public_rank,
            change=move.change,
            picked=move.auto,
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
    intervals: bool = Field(description="the phase shows intervals and comparisons (its bundle may turn them off)")
    comparisons: list[ComparisonOut] = Field(description="each entry against the next, paired on the same units")
    few_units: bool = Field(description="some interval rests on fewer than 20 units")
    board: str = Field(
        "plain", description="ladder: each team's score moves only past the paired standard error (the Ladder)"
    )
    too_few_units: bool = Field(
        False, description="no pair could be compared (5 units or fewer): no tied groups, which does not mean tied"
    )
    ranked_by: str = Field(
        "public",
        description="the units the entries are ranked on: public (all units where the phase has no private split), "
        "or, once a phase with a split is revealed, private or all",
    )
    private_share: float | None = Field(None, description="the share of units kept private; null: no split")
    private_board: list[MoveOut] | None = Field(
        None, description="the private board with each entrant's public rank: for organizers, and for all once revealed"
    )
    final_submissions: int | None = Field(
        None, description="how many submissions a team marks as final for the private board; null: no final choice"
    )
    frozen_at: datetime | None = Field(
        None, description="the public board shows what was submitted before this, until the reveal; null: no freeze"
    )

    @classmethod
    def of(cls, snapshot: BoardSnapshot) -> LeaderboardOut:
        """The snapshot's ranking as the API answers it (entries only where its viewers may see numbers)."""
        facts, described, uncertainty = snapshot.facts, snapshot.description, snapshot.uncertainty
        return cls(
            competition=facts.competition,
            task=facts.task,
            phase=facts.phase,
            scorer=described.name,
            primary_metric=snapshot.rules.primary,
            metrics=[
                MetricOut(
                    name=m.name,
                    meaning=m.meaning,
                    higher_is_better=m.higher_is_better,
                    format=m.format,
                    decimals=m.decimals,
                    title=m.label,
                )
                for m in described.metrics
            ],
            selection=facts.selection,
            hidden=not facts.metrics_public,
            entries=[EntryOut.of(entry, snapshot.uncertainty) for entry in snapshot.entries],
            intervals=facts.intervals,
            comparisons=[ComparisonOut(**c.to_dict()) for c in uncertainty.comparisons] if uncertainty else [],
            few_units=bool(uncertainty and uncertainty.few_units),
            board=facts.board,
            too_few_units=bool(uncertainty and not uncertainty.comparable),
            ranked_by=facts.ranked_by,
            private_share=facts.private_share,
            private_board=[MoveOut.of(move) for move in snapshot.split.moves] if snapshot.split else None,
            final_submissions=facts.final_submissions,
            frozen_at=facts.frozen_at,
        )
