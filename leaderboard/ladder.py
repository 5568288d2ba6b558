"""The Ladder: a public board that a team cannot overfit by submitting many variants (Blum & Hardt 2015).

A board that shows every submission's score on the same units answers a question about those units each time;
a team that submits many variants and keeps what the board rewards learns the units' answers (the boosting
attack of the paper: many random submissions, keep those above chance, combine them by majority vote; the
combination scores far above chance on the board and at chance on new data).

The parameter-free Ladder (Blum & Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning
Competitions", ICML 2015, algorithm 2) answers far fewer questions: a team's shown score changes only when a
submission beats it by more than the standard error of the paired difference between that submission and the
one the shown score came from, on the same units; the new shown score is then rounded to a multiple of ``1/n``
(``n`` units); otherwise the last shown score is shown again. ``climb`` runs it over one team's submissions in
upload order; a metric's direction is respected (lower-is-better metrics must fall by the margin).

The standard error is the jackknife's over units, both systems leaving each unit out together, stratum by
stratum (``leaderboard.strata.shares``): on a mean it is the paper's ``std(differences) / sqrt(n)``. A
submission whose units differ from the shown one's, or without units, cannot be compared and raises nothing.

``boosting_attack`` plays the paper's attack against a plain board and a ladder board on synthetic binary
labels (``tests/leaderboard/test_ladder.py``, ``bench/ladder_bench.py``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from leaderboard.resampling import Resamplable, Statistic, UnitStats
from leaderboard.significance import _pair
from leaderboard.strata import shares
from scorers.families.weighted import WeightedMetric, nested_mean, unit_column

if TYPE_CHECKING:
    import numpy as np

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Rung(Generic[K]):
    """One submission on its team's ladder: its own score, the score the board shows after it, whether it raised
    the shown score, and the margin (standard error) it had to beat (None for the first, or when untested)."""

    key: K
    score: float | None
    shown: float | None
    raised: bool
    margin: float | None = None


def paired_margin(
    scorer: Resamplable, units_a: Mapping[str, UnitStats], units_b: Mapping[str, UnitStats], metric: str
) -> tuple[float, float] | None:
    """``(a - b, standard error of a - b)`` on the shared units (jackknife, stratified); None if not comparable."""
    pair = _pair(scorer, units_a, units_b, metric)
    if pair is None:
        return None
    variance = sum(share for _, share in shares(pair.left_out(), pair.strata))
    return pair.difference, math.sqrt(variance)


def rounded(value: float, units: int) -> float:
    """``value`` rounded to the nearest multiple of ``1/units``."""
    return round(value * units) / units


def climb(
    scorer: Resamplable,
    submissions: Sequence[tuple[K, Mapping[str, UnitStats] | None]],
    metric: str,
    *,
    higher_is_better: bool = True,
    round_to_units: bool = True,
) -> list[Rung[K]]:
    """The Ladder over one team's ``submissions`` (key, units), in upload order: one ``Rung`` per submission.

    ``round_to_units``: a new shown score is rounded to a multiple of 1/n (the paper's rule, for metrics in
    [0, 1]); pass False for a metric on another scale.
    """
    sign = 1.0 if higher_is_better else -1.0
    out: list[Rung[K]] = []
    best: Mapping[str, UnitStats] | None = None
    shown: float | None = None
    for key, units in submissions:
        score = Statistic.of(scorer, units, metric).estimate() if units else None
        if score is None or math.isnan(score):
            out.append(Rung(key, None, shown, False))
            continue
        assert units is not None
        if best is None or shown is None:
            best, shown = units, _shown(score, len(units), round_to_units)
            out.append(Rung(key, score, shown, True))
            continue
        compared = paired_margin(scorer, units, best, metric)
        if compared is None:
            out.append(Rung(key, score, shown, False))
            continue
        _, margin = compared
        if sign * (score - shown) > margin:
            best, shown = units, _shown(score, len(units), round_to_units)
            out.append(Rung(key, score, shown, True, margin))
        else:
            out.append(Rung(key, score, shown, False, margin))
    return out


def _shown(score: float, units: int, round_to_units: bool) -> float:
    return rounded(score, units) if round_to_units else score


# -- the boosting attack ----------------------------------------------------------------------------------------


class Accuracy:
    """Accuracy of binary predictions: units ``{"x": 1.0 if right else 0.0}``, averaged (a resamplable scorer)."""

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        import numpy as np

        return {"accuracy": float(np.mean([s["x"] for s in stats])) if stats else math.nan}

    def stratum(self, unit: UnitStats) -> None:
        return None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        return nested_mean(unit_column(stats, "x"), [()] * len(stats))


@dataclass(frozen=True)
class AttackResult:
    """What a board shows for the attacker's team (``public``), and what the submission it shows scores on units
    the attacker never saw (``private``); ``kept``: how many submissions the attacker combined."""

    board: str
    public: float
    private: float
    kept: int

    @property
    def gap(self) -> float:
        return self.public - self.private


def boosting_attack(
    submissions: int = 200, public_units: int = 2000, private_units: int = 2000, *, seed: int = 0
) -> tuple[AttackResult, AttackResult]:
    """The boosting attack of Blum & Hardt against a plain board and a ladder board: the labels are random, so every
    submission's true accuracy is 0.5. The attacker submits ``submissions`` random label vectors, keeps those the
    board rewards (above chance on the plain board; on the ladder, those that raised the shown score above
    chance: it sees nothing else), and submits their majority vote. The plain board shows the team's best
    public score, the ladder its last shown score. Returns (plain, ladder)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, public_units + private_units)
    guesses = rng.integers(0, 2, (submissions, public_units + private_units))
    ids = [f"u{i:06d}" for i in range(public_units)]

    def right(guess: np.ndarray) -> np.ndarray:
        return np.asarray(guess == labels, dtype=np.float64)

    def units(guess: np.ndarray) -> dict[str, dict[str, float]]:
        return {u: {"x": float(v)} for u, v in zip(ids, right(guess)[:public_units], strict=True)}

    def vote(kept: list[int]) -> np.ndarray:
        votes = guesses[kept].mean(axis=0) if kept else np.full(labels.shape, 0.5)
        return np.where(votes == 0.5, rng.integers(0, 2, labels.shape), votes > 0.5).astype(np.int64)

    def private(guess: np.ndarray) -> float:
        return float(right(guess)[public_units:].mean())

    # Plain board: every score shown, the team's best counts.
    scores = [float(right(g)[:public_units].mean()) for g in guesses]
    kept = [i for i, score in enumerate(scores) if score > 0.5]
    everything = [*guesses, vote(kept)]
    best = max(range(len(everything)), key=lambda i: float(right(everything[i])[:public_units].mean()))
    shown = float(right(everything[best])[:public_units].mean())
    plain = AttackResult("plain", shown, private(everything[best]), len(kept))
    # The Ladder: the team's shown score only.
    rungs = climb(Accuracy(), [(i, units(g)) for i, g in enumerate(guesses)], "accuracy")
    kept = [r.key for r in rungs if r.raised and (r.shown or 0.0) > 0.5]
    combined = vote(kept)
    rungs += climb(
        Accuracy(), [(-1, units(guesses[_last_raised(rungs)])), (len(guesses), units(combined))], "accuracy"
    )[1:]
    shows = _last_raised(rungs)
    final = combined if shows == len(guesses) else guesses[shows]
    ladder = AttackResult("ladder", float(rungs[-1].shown or 0.0), private(final), len(kept))
    return plain, ladder


def _last_raised(rungs: Sequence[Rung[int]]) -> int:
    return next(r.key for r in reversed(rungs) if r.raised)
