"""The contract every scorer fulfils.

A scorer turns gold bytes and submission bytes into a ``ScoreReport``. Its work is split in
pure steps so that leaderboards can resample documents for confidence intervals:

1. ``parse_gold(bytes)`` validates the organizers' gold (refusing it with ``InvalidGold``) and builds
   the typed gold ``G``, answers included. ``public_view(gold)`` extracts what participants are given
   of it, ``P``: the ids, sentences, documents or candidate lists a phase publishes, never a label, a
   span or a count derived from the answers.
2. ``parse_submission(bytes, public)`` validates a submission against the public view only, refusing it
   with ``InvalidSubmission`` and located problems. It never receives the gold, so whether a file is
   accepted, and every word of a refusal, depends on the submission and the public inputs alone
   (the secrecy rule: a refusal is free, so it must not be a question to the answers). A rule that
   needs the answers is applied in step 3, as a score.
3. ``unit_stats(gold, submission)`` does the per-unit work (a unit is a document, or a
   (language, document) group for SV-Ident) and returns one JSON-serialisable mapping per unit.
4. ``aggregate(stats)`` turns any sequence of those mappings (a subset, or a bootstrap
   resample with repeats) into the overall metrics, as the task's definition aggregates.

Two optional hooks serve the leaderboard's intervals: ``stratum(unit)`` (what to resample within) and
``weighted_metric(stats, metric)`` (the aggregation of many resamples at once, as matrix products).

``compute`` runs steps 3 and 4 and adds the breakdowns; ``score`` runs all of it from bytes. A public
view compares equal to the view of any gold with the same public inputs (a frozen dataclass of ids does):
the differential test in ``tests/scorers`` checks this, and the refusals, over every registered scorer.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from scorers.description import MetricSpec as MetricSpec
from scorers.description import ScorerDescription
from scorers.errors import NoSample, OptionsError
from scorers.io import gc_paused, unpack_submission
from scorers.options import OptionSpec as OptionSpec
from scorers.options import check_type, resolve

if TYPE_CHECKING:
    from scorers.families.weighted import WeightedMetric

#: The gold as the scorer reads it, answers included: only scoring sees it.
G = TypeVar("G")
#: The public view of the gold: what participants are given; the only thing validation sees.
P = TypeVar("P")
#: A validated submission.
S = TypeVar("S")

#: Per-unit statistics: plain JSON values only (numbers, strings, lists, dicts).
UnitStats = Mapping[str, Any]
#: ``breakdown[dimension][key] = {metric: value}``, e.g. ``breakdown["language"]["de"]["f1"]``.
Breakdown = dict[str, dict[str, dict[str, float]]]


@dataclass(frozen=True)
class PublicIds:
    """A public view that is a list of ids (sentences, documents, instances), in the gold's order.

    For tasks whose participants are given the items to label and nothing a validation needs besides their
    ids. ``known`` is the same ids as a set, for look-ups.
    """

    ids: tuple[str, ...]

    @functools.cached_property
    def known(self) -> frozenset[str]:
        """The ids as a set, made when first asked for (a view whose checks never ask does not hold it)."""
        return frozenset(self.ids)

    @classmethod
    def of(cls, keys: Iterable[str]) -> PublicIds:
        return cls(tuple(keys))


@dataclass(frozen=True)
class ScoreReport:
    """What a scorer returns: overall metrics (fractions in [0, 1]) and breakdowns.

    ``units`` holds the per-unit statistics that ``aggregate`` consumes, so that a stored report
    is enough to recompute the metrics on any subset of units (bootstrap intervals).
    """

    scorer: str
    version: str
    metrics: dict[str, float]
    breakdown: Breakdown = field(default_factory=dict)
    units: dict[str, UnitStats] = field(default_factory=dict)

    def to_dict(self, *, with_units: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "scorer": self.scorer,
            "version": self.version,
            "metrics": dict(self.metrics),
            "breakdown": self.breakdown,
        }
        if with_units:
            out["units"] = self.units
        return out


class Scorer(ABC, Generic[G, P, S]):
    """Base class of the registered scorers. Subclasses set the class attributes below."""

    name: ClassVar[str]
    version: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str] = ""
    primary_metric: ClassVar[str]
    #: Tie-breakers after the primary metric, in order (used by leaderboards).
    secondary_metrics: ClassVar[tuple[str, ...]] = ()
    metrics: ClassVar[tuple[MetricSpec, ...]]
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    gold_format: ClassVar[str]
    submission_format: ClassVar[str]
    #: File name a participant's file conventionally has (``submission.json``).
    submission_filename: ClassVar[str] = "submission.json"
    #: What one unit of ``unit_stats`` is, for people (``document``, ``group``).
    unit: ClassVar[str] = "document"
    #: The key of ``breakdown`` that holds one row per document (or group, query, frame): the one source the
    #: per-document downloads and chart read. The default ``breakdown`` writes it; an override must too.
    per_unit_breakdown: ClassVar[str | None] = "document"
    #: Breakdown dimensions whose columns a leaderboard may show next to the metrics.
    leaderboard_breakdowns: ClassVar[tuple[str, ...]] = ()
    #: ``parse_submission`` receives the uploaded bytes as they are (a zip of several files stays a zip)
    #: instead of the one file ``unpack_submission`` takes out of a zip.
    raw_submission: ClassVar[bool] = False
    #: Its metrics can be computed on any subset of its units (``aggregate`` of their statistics), so a phase may
    #: keep some units private (``scorers.split``); False for a scorer that scores a submission as a whole.
    splittable: ClassVar[bool] = True
    #: Why a scorer that is not ``splittable`` is not, for the refusal of a phase that asks for a private split.
    unsplittable_because: ClassVar[str] = "it scores a submission as a whole: it has no units to keep private"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        #: The resolved option values (defaults overlaid with what the task's configuration gives).
        self.config: dict[str, Any] = self.resolve_options(options or {})

    # -- declared facts -------------------------------------------------------------------
    @property
    def higher_is_better(self) -> bool:
        return self.metric(self.primary_metric).higher_is_better

    def metric(self, name: str) -> MetricSpec:
        for spec in self.metrics:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def described(self) -> ScorerDescription:
        """``describe`` with this instance's options: the metrics as configured."""
        return self.describe(self.config)

    @classmethod
    def resolve_options(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overlaid with ``given``; unknown names, wrong types and values that do not go together are
        refused (``OptionsError``, its ``key`` naming the option, or the item of a list option, at fault)."""

        def check(name: str, value: Any) -> Any:
            try:
                return cls.check_option(name, value)
            except OptionsError as exc:
                if exc.key is None:
                    raise OptionsError(exc.detail, name) from None
                raise

        resolved = resolve(cls.options, given, owner=cls.name, error=OptionsError, check=check)
        cls.check_config(resolved)
        return resolved

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        """Validate one option value; subclasses override for options with richer rules."""
        spec = next(spec for spec in cls.options if spec.name == name)
        return check_type(spec, value, owner=cls.name, error=OptionsError)

    @classmethod
    def check_config(cls, config: Mapping[str, Any]) -> None:
        """Refuse resolved options that do not go together (``OptionsError`` with the key of one); none by default."""

    @classmethod
    def config_warnings(cls, config: Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(option, message)`` for resolved options that are valid but probably not what an organizer wants; a
        bundle loads with these as warnings. None by default."""
        return []

    @classmethod
    def configured_metrics(cls, config: Mapping[str, Any]) -> tuple[str, tuple[str, ...], tuple[MetricSpec, ...]]:
        """The primary metric, the tie-breakers and the metrics (with their directions and formats) that the
        resolved options give; by default the declared ones, whatever the options."""
        return cls.primary_metric, tuple(cls.secondary_metrics), tuple(cls.metrics)

    @classmethod
    def configured_per_unit_breakdown(cls, config: Mapping[str, Any]) -> str | None:
        """``per_unit_breakdown`` where the resolved options have ``breakdown`` write its rows, else None."""
        return cls.per_unit_breakdown

    @classmethod
    def describe(cls, options: Mapping[str, Any] | None = None) -> ScorerDescription:
        """Everything a person, a page or a leaderboard needs to know about the scorer; with ``options`` (a task's
        configuration), the metrics, primary metric and directions those options give (``configured_metrics``)."""
        config = cls.resolve_options(options or {})
        primary, secondary, metrics = cls.configured_metrics(config)
        return ScorerDescription(
            name=cls.name,
            version=cls.version,
            title=cls.title,
            summary=cls.description,
            primary_metric=primary,
            secondary_metrics=secondary,
            metrics=metrics,
            options=tuple(cls.options),
            gold_format=cls.gold_format,
            submission_format=cls.submission_format,
            submission_filename=cls.submission_filename,
            unit=cls.unit,
            per_unit_breakdown=cls.configured_per_unit_breakdown(config),
            raw_submission=cls.raw_submission,
            leaderboard_breakdowns=tuple(cls.leaderboard_breakdowns),
        )

    # -- the three steps ------------------------------------------------------------------
    @abstractmethod
    def parse_gold(self, data: bytes) -> G:
        """Validate gold bytes; raise ``InvalidGold`` naming the problems."""

    @abstractmethod
    def public_view(self, gold: G) -> P:
        """What participants are given of ``gold``: ids, sentences, documents, candidate lists; no answer.

        The value holds no reference to the answers (build a new object of the public parts only), and it
        compares equal for two golds that differ only in their answers.
        """

    @abstractmethod
    def parse_submission(self, data: bytes, public: P) -> S:
        """Validate submission bytes (already unzipped) against the public view; raise ``InvalidSubmission``.

        Refusals and their messages may depend on ``data``, ``public`` and the scorer's options only.
        """

    def parse_raw(self, data: bytes, public: P, *, max_bytes: int) -> S:
        """For a ``raw_submission`` scorer: ``parse_submission`` of the upload as it is, with the server's
        bound on what it may unpack to (``max_bytes``); the default ignores the bound."""
        return self.parse_submission(data, public)

    @abstractmethod
    def unit_stats(self, gold: G, submission: S) -> dict[str, UnitStats]:
        """Per-unit statistics, keyed by unit id (document id, or ``lang/doc`` group)."""

    @abstractmethod
    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        """Overall metrics from any sequence of unit statistics (repeats allowed)."""

    # -- resampling: confidence intervals and paired comparisons (both optional) ---------------
    def stratum(self, unit: UnitStats) -> str | None:
        """The part a unit is resampled within, or None: all units are drawn together (the default).

        A task that averages per part (SV-Ident: per language, then over languages) names the part, so
        that every bootstrap replicate keeps each part's number of units and measures what the score does.
        """
        return None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric | None:
        """``metric`` on many weightings of ``stats`` at once, or None (the default: callers loop instead).

        Called on a (replicates x units) matrix of unit counts, the result gives one value per row: what
        ``aggregate`` gives on the units repeated that many times, except NaN where the metric is undefined
        (every denominator zero). ``scorers.families.weighted`` builds these for sums and nested means.
        """
        return None

    def breakdown(self, gold: G, submission: S, stats: Mapping[str, UnitStats]) -> Breakdown:
        """Breakdown tables; the default is one row per unit under ``per_unit_breakdown``. Subclasses add theirs."""
        if self.per_unit_breakdown is None:
            return {}
        return {self.per_unit_breakdown: {key: self.aggregate([value]) for key, value in stats.items()}}

    # -- what participants are told with the format -------------------------------------------
    def format_notes(self, public: P) -> tuple[str, ...]:
        """Sentences participants are shown with the phase's submission format, from the public view alone (so
        the same for two golds with the same public inputs): the figures a phase publishes that its limits are
        computed from. None by default."""
        return ()

    # -- the sample submission --------------------------------------------------------------
    def sample_submission(self, public: P) -> bytes:
        """A file in the submission format, valid for ``public`` and built from it alone (every label 0,
        every candidate scored 0, empty predictions): what a participant uploads first to see the format work.

        It depends on the public view only, so two golds with the same public inputs give the same bytes.
        A scorer that cannot build one raises ``NoSample`` saying why (the default).
        """
        raise NoSample(f"the scorer {self.name} cannot build a sample submission from the public inputs")

    # -- conveniences ---------------------------------------------------------------------
    # The statistics, tables and breakdowns of thousands of units are many small containers, and a collector
    # pass among them would also walk the whole parsed gold and submission: see scorers.io.gc_paused.
    @gc_paused()
    def compute(self, gold: G, submission: S, units: Sequence[str] | None = None) -> ScoreReport:
        """Score a parsed submission; with ``units``, only on those units (repeats allowed)."""
        stats = self.unit_stats(gold, submission)
        chosen = [stats[u] for u in units] if units is not None else list(stats.values())
        metrics = self.aggregate(chosen)
        table = self.breakdown(gold, submission, stats) if units is None else {}
        return ScoreReport(self.name, self.version, metrics, table, stats)

    def compute_report(self, gold: G, submission: S) -> dict[str, Any]:
        """``compute(gold, submission).to_dict()``: the report without its unit statistics, as ``podium score``
        prints it. A scorer whose statistics are large overrides it so as not to hold them all at once."""
        return self.compute(gold, submission).to_dict()

    @gc_paused()  # the three steps under one pause, so that the collector walks their objects at most once
    def score(self, gold_bytes: bytes, submission_bytes: bytes) -> ScoreReport:
        """Parse both files (unzipping the submission if needed) and compute."""
        gold = self.parse_gold(gold_bytes)
        content = submission_bytes if self.raw_submission else unpack_submission(submission_bytes)[0]
        return self.compute(gold, self.parse_submission(content, self.public_view(gold)))


def prf(correct: float, predicted: float, gold: float) -> tuple[float, float, float]:
    """Precision, recall and F1 from counts; any zero denominator gives 0 (as the seed tasks do)."""
    p = correct / predicted if predicted else 0.0
    r = correct / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f
