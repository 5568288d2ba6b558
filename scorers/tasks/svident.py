"""SV-Ident 2022 (survey variable identification): Task 1 detection and Task 2 disambiguation.

Definition (SCORING.md, "SV-Ident"). Sentences are grouped by (the row's ``lang``, ``doc_id``); each
group is scored on its own; the overall number is the plain mean over the groups of each language, then
the plain mean over languages, so a group of one sentence weighs as much as a group of two hundred.
The per-language means and the per-group numbers are the ``language`` and ``document`` breakdowns (the
overview paper's Tables 8 and 12).

* ``svident-detection`` (Task 1): the label of a sentence is ``is_variable``. Per group, scikit-learn's
  macro precision, recall and F1 over the labels that occur in the group's gold or predictions, with
  ``zero_division=0``: a group whose gold and predictions are all 0 scores 1.
* ``svident-disambiguation`` (Task 2): the queries are the sentences with is_variable 1 and at least one
  variable other than ``unk``; a query's relevant set is those variables. Per query, trec_eval's
  ``map_cut_k`` (AP@k divides by all relevant variables, so a perfect list scores min(k, R) / R) and
  ``Rprec``, computed by pytrec_eval; per group, the mean over its queries. Groups without queries are
  not units. A query the run leaves out scores 0 on every measure, as an empty list does (trec_eval's
  ``-c``): refusing it would tell participants which sentences are queries, that is, the Task 1 answers.

Formats: gold is the release TSV (``scorers.tasks.svident_format``). Task 1 submissions are
``{uuid: label}`` with labels "0"/"1" or 0/1; Task 2 submissions are ``{uuid: {variable_id: score}}``,
higher scores first, ties broken as trec_eval breaks them (single-precision score, then doc id in
descending ``strcmp`` order). Both are validated against the public view, ``PublicIds``: the uuids of
the test sentences, which participants are given; never against labels or variables.

Options, for tasks that reuse these scorers: ``average_by`` ("language", the official two-stage mean, or
"group", a plain mean over groups); Task 1 ``average`` (scikit-learn's macro, weighted, micro or binary
within a group); Task 2 ``cutoffs`` (the k of map@k; 10 must stay, it is the primary metric).

Size limits (Task 2, ``scorers.tasks.limits``), measured on the run alone: ``max_candidates_per_query``
(10,000), ``max_candidates`` (50,000,000 in the whole run) and ``max_variable_chars`` (1,000 characters in a
variable id). The official test run lists 500 candidates for each of its 717 queries (358,500 in all) and no
variable id of the release is longer than 30 characters. Scoring is linear in the run (each list is cut, as
it is read, to the candidates that can reach the deepest rank a measure may look at: max(largest cutoff,
``max_relevant_per_query``)), so these bound memory and the length of one list rather than any quadratic
step. ``max_relevant_per_query`` (50; the release has at most 31) is a limit on the gold, checked when the
organizers' gold is loaded: R-precision looks at rank R, so that depth must be known without the gold.
Task 1 needs no limit: every key must be a test sentence's uuid and every value a label, so a Task 1 file is
refused or costs what reading it costs.

Refused. Gold: missing columns, an is_variable other than 0/1, an empty uuid, doc_id or lang, a lang
holding "/", a repeated uuid, rows with the wrong number of fields; for Task 2, a gold without queries and
a sentence beyond ``max_relevant_per_query``. Task 1: a test sentence without a label, a key that is not a
test sentence's uuid, a repeated key, any other label value (true, 0.5, "2"). Task 2: a key that is not a
test sentence's uuid, a repeated key, a list that is not an object, a score that is not a JSON number
(numeric strings, true/false), NaN or infinite scores, an integer score too large for a double, a run
beyond a size limit. Every refusal depends on the file and the public uuids only; a missing query is
scored (0), never refused.

Deliberate differences from the official ``scripts/evaluate_task1.py`` and ``evaluate_task2.py``: Task 2
pairs queries by uuid (the official script pairs by position in the file), breaks ties as trec_eval does
(the official one by insertion order), scores the queries of a group the run leaves out 0 (the official one
skips the group), scores an empty candidate object 0 (the official one crashes) and ignores the lists of
sentences that are not queries (the official one crashes on them inside a group that has queries).
Task 1 accepts integer labels against the string gold (the official one crashes when a whole group is
given integers). Any language code is accepted, not only en and de.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from scorers.base import Breakdown, MetricSpec, OptionSpec, PublicIds, Scorer, UnitStats
from scorers.errors import InvalidGold, OptionsError, Problem
from scorers.families import classification, ranking, weighted
from scorers.families.averaging import nested_mean
from scorers.families.weighted import WeightedMetric
from scorers.io import json_bytes
from scorers.registry import register
from scorers.tasks import svident_format
from scorers.tasks.limits import check_limit
from scorers.tasks.svident_format import RunLimits, SvIdentGold

S = TypeVar("S")

#: ``average_by`` values: the levels that ``nested_mean`` averages over, outermost first.
AVERAGING_LEVELS: dict[str, tuple[str, ...]] = {"language": ("language",), "group": ()}
GOLD_FORMAT = (
    "SV-Ident release TSV with a header row: sentence, is_variable, variable (';'-separated, may hold unk), "
    "research_data, doc_id, uuid, lang"
)
AVERAGE_BY = OptionSpec(
    "average_by",
    "language",
    "'language': mean over the (language, document) groups of each language, then over languages (the "
    "official definition); 'group': plain mean over all groups",
)


def unit_id(lang: str, doc_id: str) -> str:
    """The id of a (language, document) group; ``lang`` never holds a ``/``, so ids are unambiguous."""
    return f"{lang}/{doc_id}"


class _SvIdentScorer(Scorer[SvIdentGold, PublicIds, S], Generic[S]):
    """What both tasks share: the gold, grouping by (lang, doc_id) and averaging groups, then languages."""

    unit: ClassVar[str] = "group"
    per_unit_breakdown: ClassVar[str] = "document"
    leaderboard_breakdowns: ClassVar[tuple[str, ...]] = ("language",)
    gold_format: ClassVar[str] = GOLD_FORMAT
    submission_filename: ClassVar[str] = "submission.json"
    choices: ClassVar[dict[str, tuple[str, ...]]] = {"average_by": tuple(AVERAGING_LEVELS)}

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        value = check_limit(cls.name, name, super().check_option(name, value))
        allowed = cls.choices.get(name)
        if allowed is not None and value not in allowed:
            raise OptionsError(f"option {name!r} of {cls.name} must be one of {', '.join(allowed)}, not {value!r}")
        return value

    def metric_names(self) -> list[str]:
        return [spec.name for spec in self.metrics]

    def parse_gold(self, data: bytes) -> SvIdentGold:
        return svident_format.parse_gold(data)

    def public_view(self, gold: SvIdentGold) -> PublicIds:
        return PublicIds.of(gold.label)

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return nested_mean(stats, self.metric_names(), AVERAGING_LEVELS[self.config["average_by"]])

    def stratum(self, unit: UnitStats) -> str | None:
        # Averaged per language, then over languages: a resample keeps each language's number of groups.
        return str(unit["language"]) if self.config["average_by"] == "language" else None

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        levels = AVERAGING_LEVELS[self.config["average_by"]]
        keys = [tuple(s[level] for level in levels) for s in stats]
        return weighted.nested_mean(weighted.unit_column(stats, metric), keys)

    def breakdown(self, gold: SvIdentGold, submission: S, stats: Mapping[str, UnitStats]) -> Breakdown:
        names = self.metric_names()
        by_language: dict[str, list[UnitStats]] = {}
        for value in stats.values():
            by_language.setdefault(value["language"], []).append(value)
        return {
            "language": {lang: nested_mean(by_language[lang], names, ()) for lang in sorted(by_language)},
            self.per_unit_breakdown: {key: {m: float(stats[key][m]) for m in names} for key in sorted(stats)},
        }


@register
class SvIdentDetection(_SvIdentScorer[dict[str, int]]):
    """Task 1: does a sentence mention a survey variable? Macro P/R/F1 per document, then averaged."""

    name = "svident-detection"
    version = "1.0"
    title = "SV-Ident 2022 Task 1: variable detection"
    description = (
        "Macro precision, recall and F1 of the is_variable labels, computed per (language, document) group "
        "(scikit-learn, zero_division=0), averaged over the groups of each language, then over languages."
    )
    primary_metric = "f1"
    secondary_metrics = ("precision", "recall")
    metrics = (
        MetricSpec("f1", "macro F1 per document, averaged over documents, then languages"),
        MetricSpec("precision", "macro precision per document, averaged over documents, then languages"),
        MetricSpec("recall", "macro recall per document, averaged over documents, then languages"),
    )
    options = (
        OptionSpec(
            "average",
            "macro",
            "scikit-learn average within a group: macro, weighted, micro, or binary (the numbers of label 1)",
        ),
        AVERAGE_BY,
    )
    choices: ClassVar[dict[str, tuple[str, ...]]] = {**_SvIdentScorer.choices, "average": classification.AVERAGES}
    submission_format = 'JSON object {uuid: label}, label "0"/"1" or 0/1, for every gold sentence'

    def parse_gold(self, data: bytes) -> SvIdentGold:
        # Task 1 never looks at the variables: the gold's queries (``relevant``) are not built.
        return svident_format.parse_gold(data, queries=False)

    def parse_submission(self, data: bytes, public: PublicIds) -> dict[str, int]:
        return svident_format.parse_labels(data, public)

    def sample_submission(self, public: PublicIds) -> bytes:
        """Every sentence labelled 0."""
        return json_bytes(dict.fromkeys(public.ids, 0))

    def unit_stats(self, gold: SvIdentGold, submission: dict[str, int]) -> dict[str, UnitStats]:
        # (group, gold label, predicted label) per sentence, by zip and map without a Python step per sentence;
        # ``group`` and ``label`` hold the same uuids in the same order (``SvIdentGold``), and a submission in
        # that order too is read in order rather than looked up uuid by uuid (a cache miss each on a large file).
        in_order = svident_format.in_order(submission, gold.label)
        predicted = submission.values() if in_order else map(submission.__getitem__, gold.label)
        items = zip(gold.group.values(), gold.label.values(), predicted, strict=True)
        scored = classification.group_prf(items, average=self.config["average"])
        return {
            unit_id(lang, doc_id): {"language": lang, "document": doc_id, "sentences": prf.size, **prf.metrics()}
            for (lang, doc_id), prf in scored.items()
        }


@register
class SvIdentDisambiguation(_SvIdentScorer[Mapping[str, Mapping[str, float]]]):
    """Task 2: rank candidate variables per sentence; MAP@k and R-precision per document, then averaged."""

    name = "svident-disambiguation"
    version = "1.0"
    title = "SV-Ident 2022 Task 2: variable disambiguation"
    description = (
        "trec_eval MAP cut at 1, 5, 10 and 20 and R-precision of the ranked candidate variables of each "
        "variable-bearing sentence, averaged over the sentences of a (language, document) group, then over "
        "the groups of each language, then over languages."
    )
    primary_metric = "map@10"
    secondary_metrics = ("r_precision",)
    metrics = (
        *(
            MetricSpec(f"map@{k}", f"mean average precision over the top {k} (AP@{k} divides by all relevant)")
            for k in (1, 5, 10, 20)
        ),
        MetricSpec("r_precision", "precision at rank R, R = the number of relevant variables of the sentence"),
    )
    options = (
        OptionSpec("cutoffs", [1, 5, 10, 20], "the k of the map@k metrics; must include 10 (the primary metric)"),
        AVERAGE_BY,
        *RunLimits.options(),
    )
    submission_format = (
        "JSON object {uuid: {variable_id: score}} for any of the test sentences, higher scores rank first, finite "
        "JSON numbers; only the sentences that mention variables are scored, and one left out scores 0"
    )

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        value = super().check_option(name, value)
        if name == "cutoffs":
            if not value or any(type(k) is not int or k < 1 for k in value) or len(set(value)) != len(value):
                raise OptionsError(f"option 'cutoffs' of {cls.name} must be distinct positive integers, not {value!r}")
            if 10 not in value:
                raise OptionsError(f"option 'cutoffs' of {cls.name} must include 10, the cutoff of map@10")
            value = sorted(value)
        return value

    def metric_names(self) -> list[str]:
        return ranking.measure_names(self.config["cutoffs"])

    def parse_gold(self, data: bytes) -> SvIdentGold:
        gold = svident_format.parse_gold(data, RunLimits.from_config(self.config))
        if not gold.relevant:
            raise InvalidGold(
                [
                    Problem(
                        "", "the gold has no Task 2 query (a sentence with is_variable 1 and a variable other than unk)"
                    )
                ]
            )
        return gold

    def parse_submission(self, data: bytes, public: PublicIds) -> Mapping[str, Mapping[str, float]]:
        return svident_format.parse_run(data, public, self.config["cutoffs"], limits=RunLimits.from_config(self.config))

    def sample_submission(self, public: PublicIds) -> bytes:
        """Every sentence with no candidate ranked (the candidate variables are not among the public inputs)."""
        return json_bytes({uuid: {} for uuid in public.ids})

    def unit_stats(self, gold: SvIdentGold, submission: Mapping[str, Mapping[str, float]]) -> dict[str, UnitStats]:
        qrels = {uuid: dict.fromkeys(variables, 1) for uuid, variables in gold.relevant.items()}
        per_query = ranking.evaluate(qrels, submission, self.config["cutoffs"], missing_as_zero=True)
        names = self.metric_names()
        groups: dict[tuple[str, str], list[dict[str, float]]] = {}
        for uuid, measures in per_query.items():
            groups.setdefault(gold.group[uuid], []).append(measures)
        return {
            unit_id(lang, doc_id): {
                "language": lang,
                "document": doc_id,
                "queries": len(queries),
                **{m: math.fsum(q[m] for q in queries) / len(queries) for m in names},
            }
            for (lang, doc_id), queries in groups.items()
        }
