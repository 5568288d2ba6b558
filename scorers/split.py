"""A phase's scoring units split into a public and a private part, and a report computed on each.

A phase with a private share scores every submission on all its units, as always, and then keeps two reports:
the public one (metrics, breakdowns and unit statistics of the public units only), which is all a participant
sees while the phase runs, and the private one (the private units, or all units), which ranks the phase once it
is revealed. Which units are private is decided by a keyed hash of the unit's id: HMAC-SHA256 with a secret the
server keeps per phase, read as a number in [0, 1) and compared with the share. So the split is fixed for the
phase (every submission, every rescore and every process splits alike), depends on nothing in the gold but the
unit ids, and cannot be computed by someone who does not hold the secret.

A report on a subset of units is exact for every scorer that can restrict its metric to units: ``aggregate``
works from per-unit statistics, which hold counts where the metric is micro-averaged (SciER's correct,
predicted and gold per document, FAMuS's matched similarity and mention counts, a binary task's confusion
counts) and per-unit numbers where the metric is a mean over units (SV-Ident's groups, TREC's queries), so
``aggregate(subset)`` is the metric the task's definition gives on those units alone. A breakdown is made from the
subset's statistics (``Scorer.breakdown`` is given only those); a scorer whose breakdown reads the gold and the
submission beyond them restricts what it reads to the units it is given. The private board's breakdowns that a
leaderboard shows (``leaderboard_breakdowns``) are made so too, on the private board's units. A scorer that scores
a submission as a whole (a scoring program), or whose public view is computed from the whole gold (FAMuS CDAE
publishes its largest gold role), is not ``splittable``, and a phase of it refuses the share.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from scorers.base import Scorer, ScoreReport, UnitStats

#: What the private board ranks by once the phase is revealed: its private units, or all its units.
PrivateBoard = Literal["private", "all"]
PRIVATE_BOARDS: tuple[PrivateBoard, ...] = ("private", "all")
#: 2**64: the first eight bytes of the keyed hash read as a fraction of this.
_SCALE = float(1 << 64)


@dataclass(frozen=True)
class Split:
    """How a phase splits its units: the share that is private, the phase's secret and what the private board
    ranks by. ``private_share`` lies strictly between 0 and 1."""

    private_share: float
    secret: str
    private_board: PrivateBoard = "private"

    def __post_init__(self) -> None:
        if not 0.0 < self.private_share < 1.0:
            raise ValueError(f"a private share lies strictly between 0 and 1, not {self.private_share!r}")
        if not self.secret:
            raise ValueError("a split needs its phase's secret")
        if self.private_board not in PRIVATE_BOARDS:
            raise ValueError(f"the private board ranks by {' or '.join(PRIVATE_BOARDS)}, not {self.private_board!r}")

    def position(self, unit: str) -> float:
        """Where the unit falls in [0, 1), from the keyed hash of its id."""
        digest = hmac.new(self.secret.encode("utf-8"), unit.encode("utf-8"), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big") / _SCALE

    def is_private(self, unit: str) -> bool:
        return self.position(unit) < self.private_share

    def private_units(self, units: Iterable[str]) -> frozenset[str]:
        return frozenset(unit for unit in units if self.is_private(unit))


@dataclass(frozen=True)
class SplitReport:
    """A submission's report on the public units (what participants see before the reveal) and the metrics and
    statistics of the private units; ``private_metrics`` are those of the private board (the private units, or
    all units, as the split says)."""

    public: ScoreReport
    private_metrics: dict[str, float]
    private_units: dict[str, UnitStats]
    #: The private board's breakdowns that a leaderboard shows (the scorer's ``leaderboard_breakdowns``), on the
    #: same units as ``private_metrics``.
    private_columns: dict[str, Any] = field(default_factory=dict)


def restricted(
    scorer: Scorer[Any, Any, Any], gold: Any, submission: Any, stats: Mapping[str, UnitStats]
) -> ScoreReport:
    """The report on the units of ``stats`` alone: metrics, breakdowns and statistics of those units only."""
    kept = dict(stats)
    metrics = scorer.aggregate(list(kept.values()))
    return ScoreReport(scorer.name, scorer.version, metrics, scorer.breakdown(gold, submission, kept), kept)


def split_report(scorer: Scorer[Any, Any, Any], gold: Any, submission: Any, split: Split) -> SplitReport:
    """Score ``submission`` on all units once and report the public part and the private board's metrics."""
    if not scorer.splittable:
        raise ValueError(f"{scorer.name} cannot keep units private: {scorer.unsplittable_because}")
    stats = scorer.unit_stats(gold, submission)
    hidden = split.private_units(stats)
    public = restricted(scorer, gold, submission, {k: v for k, v in stats.items() if k not in hidden})
    private = {k: v for k, v in stats.items() if k in hidden}
    ranked = private if split.private_board == "private" else stats
    shown = scorer.leaderboard_breakdowns
    columns = scorer.breakdown(gold, submission, dict(ranked)) if shown and ranked else {}
    kept = {dimension: columns[dimension] for dimension in shown if dimension in columns}
    return SplitReport(public, scorer.aggregate(list(ranked.values())), private, kept)


def board_units(
    public: Mapping[str, UnitStats], private: Mapping[str, UnitStats], private_board: PrivateBoard
) -> dict[str, UnitStats]:
    """The unit statistics the private board ranks by: the private units, or all of them."""
    return dict(private) if private_board == "private" else {**public, **private}
