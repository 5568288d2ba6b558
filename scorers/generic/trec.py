"""``trec``: TREC-style ranking scored as trec_eval 9.0.8 scores it, configured in the bundle.

Gold: a qrels file; submission: a run, plain or zipped (``scorers.generic.trec_format`` reads both). The public
view of the gold is its list of query ids (a phase can publish it as its topics). Metrics: the configured trec_eval
measures by their output names (``scorers.families.trec_measures``), the first being the primary metric. Each is
computed per query by pytrec_eval and averaged over queries as trec_eval averages it. Units are queries, so a
leaderboard resamples queries for its intervals.

Options and the trec_eval flag each stands for: ``measures`` (``-m``), ``relevance_level`` (``-l``, at least 1:
pytrec_eval refuses lower levels), ``judged_docs_only`` (``-J``), ``max_docs_per_query`` (``-M``; null: no cut),
``complete_queries`` (``-c``), ``per_query`` (``-q``: the numbers of each query in the breakdown, as
``breakdown["query"][qid][measure]``; a geometric mean's number for one query is max(value, 1e-5), and with
``complete_queries`` the queries the run lacks are listed too, with the numbers they count with), and two refusals
that trec_eval does not have: ``reject_unknown_queries`` (a run query that is not in the qrels' list) and
``require_all_queries`` (a qrels query the run lacks). Without ``complete_queries`` or ``require_all_queries`` the
mean is over the queries a run answers, so a run can leave out its hardest queries; bundles should set one.

Ranking, as trec_eval: by the score held as a C float, descending, ties by docno in descending byte order; the rank
column plays no part. ``-M`` keeps the first n of that order, and ``-J`` then drops the documents without a
judgement. Queries of the run that the qrels do not judge are ignored (unless refused, above).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from scorers.base import Breakdown, MetricSpec, OptionSpec, PublicIds, Scorer, UnitStats
from scorers.errors import OptionsError
from scorers.families import trec_measures
from scorers.families.ranking import top_ranked
from scorers.families.trec_measures import JUDGED_RELEVANT, Evaluator, Measure
from scorers.families.weighted import WeightedMetric
from scorers.generic.trec_format import Qrels, Run, parse_qrels, parse_run
from scorers.registry import register

#: The document the sample run ranks for every query.
SAMPLE_DOCNO = "sample-document"

#: Documents handed to pytrec_eval at a time (whole queries, at least one): few enough that the dictionaries built
#: for them are still in the processor's cache when pytrec_eval copies them (20,000 at a time cost a fifth more).
BATCH_DOCUMENTS = 1_000
#: Judgements an evaluator holds: one evaluator serves the batches of its queries, and the whole qrels as
#: dictionaries would cost more memory than the run they score.
EVALUATOR_JUDGEMENTS = 50_000
DEFAULT_MEASURES = ["map", "P_10", "ndcg_cut_10", "recip_rank"]
_MEANINGS = {
    trec_measures.MEAN: "trec_eval {name}, mean over queries",
    trec_measures.SUM: "trec_eval {name}, summed over queries",
    trec_measures.COUNT: "trec_eval {name}: the number of queries averaged over",
    trec_measures.GEOMETRIC: "trec_eval {name}, geometric mean over queries (each at least 1e-5)",
}
#: Measures where fewer is better; the others are better higher (the counts of what was retrieved: neither).
LOWER_IS_BETTER = frozenset({"num_nonrel_judged_ret"})


def _metric_spec(measure: Measure) -> MetricSpec:
    """A measure as a metric: its meaning, its direction, and a percentage unless it is a count or any number."""
    meaning = _MEANINGS[measure.averaging].format(name=measure.name)
    higher = measure.name not in LOWER_IS_BETTER
    return MetricSpec(measure.name, meaning, higher, fraction=measure.value == trec_measures.FRACTION)


@register
class Trec(Scorer[Qrels, PublicIds, Run]):
    """TREC qrels and runs, any trec_eval measure, trec_eval's averaging and options."""

    name = "trec"
    version = "1.0"
    title = "TREC-style ranking (trec_eval 9.0.8 measures)"
    description = (
        "Ranked runs scored against TREC qrels with the trec_eval measures named in the options, each averaged over "
        "queries as trec_eval 9.0.8 averages it (sums for num_*, geometric means for gm_*)."
    )
    primary_metric = DEFAULT_MEASURES[0]
    secondary_metrics = tuple(DEFAULT_MEASURES[1:])
    metrics = tuple(_metric_spec(trec_measures.parse_measure(name)) for name in DEFAULT_MEASURES)
    options = (
        OptionSpec(
            "measures",
            DEFAULT_MEASURES,
            "trec_eval measures by their output names (map, P_10, ndcg_cut_10, iprec_at_recall_0.10, "
            "Rprec_mult_0.20, utility_2,-1,0,0, ...); the first is the primary metric",
        ),
        OptionSpec("relevance_level", 1, "trec_eval -l: the lowest judgement that counts as relevant (at least 1)"),
        OptionSpec("judged_docs_only", False, "trec_eval -J: drop retrieved documents that have no judgement"),
        OptionSpec("max_docs_per_query", None, "trec_eval -M: rank only the first n documents of a query (null: all)"),
        OptionSpec(
            "complete_queries",
            False,
            "trec_eval -c: average over every query of the qrels, a query the run lacks counting 0",
        ),
        OptionSpec("per_query", False, "trec_eval -q: each query's numbers in the breakdown (query -> measure)"),
        OptionSpec("reject_unknown_queries", False, "refuse a run with a query that is not in the qrels"),
        OptionSpec("require_all_queries", False, "refuse a run that lacks a query of the qrels"),
    )
    gold_format = "TREC qrels: lines 'query iteration docno relevance', relevance an integer (graded or negative)"
    submission_format = (
        "TREC run: lines 'query Q0 docno rank score run_tag' separated by spaces or tabs; ranked by score "
        "(descending, ties by docno descending), the rank column is ignored; plain text or a zip holding one file"
    )
    submission_filename = "run.txt"
    unit: ClassVar[str] = "query"
    #: Written with the ``per_query`` option only.
    per_unit_breakdown: ClassVar[str] = "query"

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.measures: list[Measure] = trec_measures.parse_measures(self.config["measures"])

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        value = super().check_option(name, value)
        if name == "measures":
            if not value:
                raise OptionsError("at least one measure is needed (the first is the primary metric)")
            seen: list[str] = []
            for i, given in enumerate(value):
                try:
                    measure = trec_measures.parse_measure(given)
                except ValueError as exc:
                    raise OptionsError(str(exc), f"measures[{i}]") from None
                if measure.name in seen:
                    raise OptionsError(f"the measure {measure.name!r} is listed twice", f"measures[{i}]")
                seen.append(measure.name)
            return seen
        if name == "relevance_level" and value < 1:
            raise OptionsError(f"option 'relevance_level' of {cls.name} must be at least 1, not {value}")
        if name == "max_docs_per_query" and value is not None and (type(value) is not int or value < 1):
            raise OptionsError(f"option 'max_docs_per_query' of {cls.name} must be null or a positive integer")
        return value

    @classmethod
    def configured_metrics(cls, config: Mapping[str, Any]) -> tuple[str, tuple[str, ...], tuple[MetricSpec, ...]]:
        """The configured measures, in the configured order: the first ranks, the others break ties."""
        specs = tuple(_metric_spec(m) for m in trec_measures.parse_measures(config["measures"]))
        return specs[0].name, tuple(spec.name for spec in specs[1:]), specs

    @classmethod
    def config_warnings(cls, config: Mapping[str, Any]) -> list[tuple[str, str]]:
        if config["complete_queries"] or config["require_all_queries"]:
            return []
        return [
            (
                "complete_queries",
                "neither complete_queries nor require_all_queries is set, so a run is averaged over the queries it "
                "answers: it can leave out its hardest queries and score higher (set complete_queries: true, as "
                "trec_eval -c, or require_all_queries: true)",
            )
        ]

    def measure_specs(self) -> tuple[MetricSpec, ...]:
        """The configured measures as metrics, in the configured order."""
        return self.configured_metrics(self.config)[2]

    # -- the steps ----------------------------------------------------------------------------------------
    def parse_gold(self, data: bytes) -> Qrels:
        return parse_qrels(data)

    def public_view(self, gold: Qrels) -> PublicIds:
        """The qrels' query ids, in their order: a phase can publish them as its topics."""
        return PublicIds.of(gold.queries)

    def parse_submission(self, data: bytes, public: PublicIds) -> Run:
        return parse_run(
            data,
            public.ids,
            reject_unknown=self.config["reject_unknown_queries"],
            require_all=self.config["require_all_queries"],
        )

    @classmethod
    def configured_per_unit_breakdown(cls, config: Mapping[str, Any]) -> str | None:
        return cls.per_unit_breakdown if config["per_query"] else None

    def sample_submission(self, public: PublicIds) -> bytes:
        """One line per query ranking one placeholder document with score 0 (the documents are not part of
        the public view; a run needs a line per query, and a document the qrels do not judge counts as not
        relevant)."""
        return "".join(f"{query} Q0 {SAMPLE_DOCNO} 1 0 sample\n" for query in public.ids).encode("utf-8")

    def unit_stats(self, gold: Qrels, submission: Run) -> dict[str, UnitStats]:
        stats: dict[str, UnitStats] = {}
        for queries in self._query_groups(gold, submission):
            evaluator = Evaluator(
                {query: gold.judged[query].as_dict() for query in queries},
                self.measures,
                relevance_level=self.config["relevance_level"],
                judged_docs_only=self.config["judged_docs_only"],
            )
            for batch in self._batches(queries, submission):
                for query, values in evaluator.evaluate(batch).items():
                    stats[query] = {**values, JUDGED_RELEVANT: gold.judged[query].above_zero, "missing": False}
        if self.config["complete_queries"]:
            missing = trec_measures.missing_query(self.measures)
            for query, judged in gold.judged.items():
                if query not in submission.rankings:
                    relevant = judged.above_zero
                    counted = {m.name: float(relevant) for m in self.measures if m.root == "num_rel"}
                    stats[query] = {**missing, **counted, JUDGED_RELEVANT: relevant, "missing": True}
        # Queries in the order of the qrels, as trec_eval reports them.
        return {query: stats[query] for query in gold.judged if query in stats}

    @staticmethod
    def _query_groups(gold: Qrels, run: Run) -> Iterator[list[str]]:
        """The judged queries of the run, in its order, a few at a time: one evaluator's worth of judgements."""
        group: list[str] = []
        size = 0
        for query in run.rankings:
            judged = gold.judged.get(query)
            if judged is None:
                continue
            group.append(query)
            size += len(judged.relevance)
            if size >= EVALUATOR_JUDGEMENTS:
                yield group
                group, size = [], 0
        if group:
            yield group

    def _batches(self, queries: list[str], run: Run) -> Iterator[dict[str, dict[str, float]]]:
        """The rankings of ``queries`` as pytrec_eval's input, a few documents at a time (cut to ``-M``)."""
        keep = self.config["max_docs_per_query"]
        batch: dict[str, dict[str, float]] = {}
        size = 0
        for query in queries:
            ranking = run.rankings[query]
            docnos, scores = ranking.documents(), ranking.scores.tolist()
            if keep is not None and len(docnos) > keep:
                import numpy as np  # only for -M's cut

                chosen = top_ranked(docnos, np.frombuffer(ranking.scores, dtype=np.float32), keep)
                docnos, scores = [docnos[i] for i in chosen], [scores[i] for i in chosen]
            batch[query] = dict(zip(docnos, scores, strict=True))
            size += len(docnos)
            if size >= BATCH_DOCUMENTS:
                yield batch
                batch, size = {}, 0
        if batch:
            yield batch

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return trec_measures.aggregate(stats, self.measures, complete=self.config["complete_queries"])

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        measure = next(m for m in self.measures if m.name == metric)
        return trec_measures.weighted_metric(stats, measure, complete=self.config["complete_queries"])

    def breakdown(self, gold: Qrels, submission: Run, stats: Mapping[str, UnitStats]) -> Breakdown:
        if not self.config["per_query"]:
            return {}
        rows = {query: trec_measures.query_values(record, self.measures) for query, record in stats.items()}
        return {self.per_unit_breakdown: rows}
