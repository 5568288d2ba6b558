"""FAMuS: source validation (``famus-sv``); cross-document argument extraction is ``scorers.tasks.famus``.

Official code: FAMuS's ``src/model_scripts/test_source_val.py`` (scikit-learn, binary average).

Gold: the source-validation release lines (``instance_id``, boolean ``valid_source``
(1 and 0 are read too), optionally ``frame``; other keys are ignored, a repeated id is refused).
Submission: ``{instance_id: label}`` with label 0, 1, ``true`` or ``false``. Accuracy, and precision,
recall and F1 of the valid-source class, zero division giving 0; breakdown ``frame``. Refused:
missing, unknown or repeated ids and any other label ("1", 1.0, 2, "yes", null); the official script
pairs labels by position instead. No size limit is needed: every key must be a gold id and every
value a label, so a file costs what reading it costs.

No leaderboard breakdowns: FAMuS has 253 frames, too many for columns; the table stays in each score's breakdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from scorers.base import Breakdown, MetricSpec, PublicIds, Scorer, UnitStats
from scorers.families import binary
from scorers.families.weighted import WeightedMetric
from scorers.io import json_bytes
from scorers.registry import register
from scorers.tasks.famus_sv_format import SvGold, parse_sv_gold, parse_sv_submission


@register
class FamusSvScorer(Scorer[SvGold, PublicIds, dict[str, int]]):
    name = "famus-sv"
    version = "1.0"
    title = "FAMuS source validation"
    description = "Is the candidate source a valid source for the report's event? Binary classification."
    primary_metric = "f1"
    secondary_metrics = ("accuracy",)
    metrics = (
        MetricSpec("accuracy", "Share of instances labelled correctly"),
        MetricSpec("precision", "Precision of the valid-source class"),
        MetricSpec("recall", "Recall of the valid-source class"),
        MetricSpec("f1", "F1 of the valid-source class"),
    )
    gold_format = "JSON Lines, source-validation release lines with instance_id and valid_source"
    submission_format = "JSON object {instance_id: 0 or 1} (true/false accepted)"
    submission_filename = "submission.json"
    unit = "instance"
    # One row per instance would tell its label; frames group instances meaningfully.
    per_unit_breakdown: ClassVar[str] = "frame"
    leaderboard_breakdowns: ClassVar[tuple[str, ...]] = ()

    def parse_gold(self, data: bytes) -> SvGold:
        return parse_sv_gold(data)

    def public_view(self, gold: SvGold) -> PublicIds:
        return PublicIds.of(gold.labels)

    def parse_submission(self, data: bytes, public: PublicIds) -> dict[str, int]:
        return parse_sv_submission(data, public)

    def sample_submission(self, public: PublicIds) -> bytes:
        """Every instance labelled 0."""
        return json_bytes(dict.fromkeys(public.ids, 0))

    def unit_stats(self, gold: SvGold, submission: dict[str, int]) -> dict[str, UnitStats]:
        return {instance: binary.unit_stats(label, submission[instance]) for instance, label in gold.labels.items()}

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return binary.binary_scores(stats)

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        return binary.weighted_metric(stats, metric)

    def breakdown(self, gold: SvGold, submission: dict[str, int], stats: Mapping[str, UnitStats]) -> Breakdown:
        # One row per instance says nothing a reader needs; frames group instances meaningfully.
        frames = gold.frames
        by_frame = binary.grouped_scores(
            (frames[instance], value) for instance, value in stats.items() if instance in frames
        )
        if not by_frame:
            return {}
        return {self.per_unit_breakdown: {frame: by_frame[frame] for frame in sorted(by_frame)}}
