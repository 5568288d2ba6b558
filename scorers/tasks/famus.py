"""FAMuS: cross-document argument extraction (``famus-cdae``).

Official code: IterX ``src/iterx/metrics/famus/ceaf_rme.py`` (``sv/famus`` branch, the fork FAMuS
names), driven by FAMuS's ``src/metrics/compute_ceaf_metrics.py`` with its default options.

**famus-cdae** (CEAF-RME, ``scorers.families.ceaf``). Gold: JSON Lines, one
``{"docid", "templates": [{"incident_type": frame, role: [[mention, ...], ...]}]}`` per instance, a
mention being a list whose first element is its text (offsets after it are ignored; the key
``template-spans`` is bookkeeping, not a role; an entity without mentions is dropped, as the official
reader does). Submission: one JSON object ``{docid: [{"incident_type": frame, role: [filler, ...]}]}``
where a filler is ``[text, ...]``; a bare string is taken as the whole text. Documents left out count
as predicting nothing. Metrics: micro P/R/F1 under ``phi3`` (exact) and ``soft`` (token LCS).
Breakdowns: ``role`` (by role name across frames, since roles such as Place and Time recur in every
frame; only names that occur in the gold; the empty-document rule adds to no role) and ``document``.

Submissions are validated against the public view (``CdaePublic``): the gold's docids and one figure, the gold's
largest role (below), never against its templates. Refused submissions: not a JSON object; a docid not in the
gold (the official code would score an empty unknown document as perfect); a repeated docid; a document value
that is not a list of templates; a template that is not an object or lacks a string ``incident_type``; a role
value that is not a list (the official code would score a string character by character); a filler that is
empty or whose first element is not a string (it would crash); a file beyond a size limit (below).
Refused gold: a line that is not an object with a string ``docid`` and a list ``templates``, a
repeated docid, a malformed template or mention, a mention whose text is empty or only whitespace
(the official soft similarity can divide by zero on it), and a gold beyond its limits (below).

Size limits (``scorers.tasks.limits``, enforced by ``famus_limits`` and ``famus_submission`` before any
clean-up). The substring clean-up tests every pair of distinct fillers of a role, the similarities every (gold
mention, filler) pair of a document's role, and the soft similarity fills a table of gold tokens times predicted
tokens per pair, so one role of 100,000 fillers, or fillers of millions of tokens, would keep a worker busy for
hours. ``max_templates_per_document`` (100) and ``max_filler_chars`` (3,000; gold: a mention's text) bound the
parts of both files, ``max_fillers_per_role`` (500) a predicted role. A gold role of a document, over its
templates, may hold ``max_gold_mentions_per_role`` (5,000) mentions of ``max_gold_tokens_per_role`` (20,000)
tokens: room for every gold built from FAMuS's files, coreference clusters included (a coref-aware gold gives
each span its cluster's mentions: up to 252 mentions of 320 tokens in one role of a dev source document; all the
clusters of one document hold at most 787 mentions, and 1,399 tokens).

A submission's cost is bounded from the submission and the public view alone (the secrecy rule: a cost that
counted a document's gold mentions would tell participants how many its role has): every predicted role is taken
to face the gold's largest role, ``(mentions, tokens)``: the most mentions one role of a document holds and the
most tokens one role's mentions hold, each over the whole gold. That is one figure per phase, published with the
format (``Scorer.format_notes``: the phase's pages and its API) and named in every refusal of a budget.
``max_comparisons`` (2,000,000: clean-up pairs plus each filler times the largest role's mentions) and
``max_token_pairs`` (40,000,000: each filler's tokens times its tokens) bound those sums over the whole
submission (``ceaf_cost.role_work``; frames are not looked at). Measured on the release data and the published
ChatGPT and LLaMA outputs: at most 2 templates in a document, 10 fillers in a role, 312 characters in a filler;
the largest role of the dev gold is 4 mentions of 33 tokens (report) and 10 of 38 (source), 10 of 33 and 252 of
320 with coreference. The ChatGPT dev source run costs 8,189 comparisons and 105,792 token pairs against the
plain gold, 203,241 and 890,880 against the coref-aware one: the budgets leave room for its 200-fold and 9-fold
copies. A file at the comparisons budget scored in about 16 s on a 2-core machine and one at the token-pairs
budget in about 10 s (measured against a gold whose roles held 20 mentions of 100 tokens; the work grows with
the counts: 117 roles of 60 fillers, 1,976,130 comparisons against the coref-aware dev source gold, scored in
2.5 s). Everything else scoring does grows only with the size of the files.

Deliberate differences from the official code: refusals above instead of crashes or silent scores;
a bare-string filler is its whole text (officially its first character); substring-joining ties go
to code-point order (officially set order); identical gold templates are found by frame and roles in
order, ignoring where ``incident_type`` sits among the keys (the official ordered-dict comparison
also looks at that).

famus-cdae names no leaderboard breakdowns: FAMuS has 318 role names and 253 frames, too many for columns; the
tables stay in each score's breakdown. Source validation (``famus-sv``) is ``scorers.tasks.famus_sv``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from scorers.base import Breakdown, MetricSpec, OptionSpec, Scorer, ScoreReport, UnitStats
from scorers.families.ceaf import SIMILARITIES, CeafRmeOptions, DocumentScorer
from scorers.families.ceaf_aggregation import CeafTotals, micro_scores, role_scores, unit_micro_scores
from scorers.families.ceaf_templates import Template, document_templates, unflatten
from scorers.io import json_bytes
from scorers.registry import register
from scorers.tasks.famus_gold import CdaeGold, parse_cdae_gold
from scorers.tasks.famus_limits import CdaeLimits, CdaePublic, largest_role_note
from scorers.tasks.famus_submission import CdaeSubmission, parse_cdae_submission
from scorers.tasks.limits import check_limit

if TYPE_CHECKING:
    from scorers.families.weighted import WeightedMetric

PREFIX = "ceaf_rme_"


@register
class FamusCdaeScorer(Scorer[CdaeGold, CdaePublic, Mapping[str, list[Template]]]):
    name = "famus-cdae"
    version = "1.0"
    title = "FAMuS cross-document argument extraction (CEAF-RME)"
    description = (
        "Role-filler entity matching of predicted templates against the gold, with exact (phi3) and "
        "soft (token LCS) similarity, as the FAMuS paper's CEAF-RME scorer."
    )
    primary_metric = "ceaf_rme_soft_f1"
    secondary_metrics = ("ceaf_rme_phi3_f1",)
    metrics = tuple(
        MetricSpec(f"{PREFIX}{sim}_{part}", f"{label} of CEAF-RME with {what}")
        for sim, what in (("phi3", "exact mention match (phi-3)"), ("soft", "soft token-LCS match (phi-a)"))
        for part, label in (("p", "Micro precision"), ("r", "Micro recall"), ("f1", "Micro F1"))
    )
    options = (
        OptionSpec(
            "empty_document_rule",
            True,
            "A document with no gold template and no filled predicted template adds 1 to every sum (official).",
        ),
        OptionSpec(
            "join_substrings",
            True,
            "Join a predicted string into the entity of the shortest longer string of its role that contains it.",
        ),
        OptionSpec(
            "multilabel_frames",
            True,
            "Read a gold frame 'A / B' as alternatives, as the official code inherited from MUC-4 scoring.",
        ),
        *CdaeLimits.options(),
    )
    gold_format = "JSON Lines, one {docid, templates} object per instance (IterX format)"
    submission_format = 'JSON object {docid: [{"incident_type": frame, role: [["text"], ...]}, ...]}'
    submission_filename = "submission.json"
    unit = "document"
    # The public view holds the largest role of the whole gold (the submissions' limits, published with the format),
    # and a document's statistics keep the roles of the whole gold: both would tell of the private documents.
    splittable = False
    unsplittable_because = (
        "its submission limits are published from the whole gold (the largest gold role), which would tell "
        "participants about the private documents"
    )
    per_unit_breakdown: ClassVar[str] = "document"
    leaderboard_breakdowns: ClassVar[tuple[str, ...]] = ()

    @property
    def _ceaf_options(self) -> CeafRmeOptions:
        return CeafRmeOptions(
            SIMILARITIES,
            empty_document_rule=self.config["empty_document_rule"],
            multilabel_frames=self.config["multilabel_frames"],
        )

    @classmethod
    def check_option(cls, name: str, value: Any) -> Any:
        return check_limit(cls.name, name, super().check_option(name, value))

    def parse_gold(self, data: bytes) -> CdaeGold:
        return parse_cdae_gold(data, CdaeLimits.from_config(self.config))

    def public_view(self, gold: CdaeGold) -> CdaePublic:
        return gold.public()

    def parse_submission(self, data: bytes, public: CdaePublic) -> Mapping[str, list[Template]]:
        return parse_cdae_submission(
            data, public, join=self.config["join_substrings"], limits=CdaeLimits.from_config(self.config)
        )

    def format_notes(self, public: CdaePublic) -> tuple[str, ...]:
        """The phase's largest gold role, which a submission's cost is counted against."""
        return (largest_role_note(public, CdaeLimits.from_config(self.config)),)

    def sample_submission(self, public: CdaePublic) -> bytes:
        """Every document with no template."""
        return json_bytes({docid: [] for docid in public.ids})

    def unit_stats(self, gold: CdaeGold, submission: Mapping[str, list[Template]]) -> dict[str, UnitStats]:
        return dict(self._document_stats(gold, submission))

    def _document_stats(
        self,
        gold: CdaeGold,
        submission: Mapping[str, list[Template]],
        role_totals: dict[str, list[float]] | None = None,
    ) -> Iterator[tuple[str, UnitStats]]:
        """Each gold document's docid and statistics, in the gold's order, one at a time; with ``role_totals``, their
        role sums are added there instead (``DocumentScorer``)."""
        tokens = gold.tokens.reader()  # the gold's mentions were split when it was read
        # Only gold role names are kept, so nothing a submission invents reaches stored results.
        score = DocumentScorer(self._ceaf_options, tokens, gold.roles, role_totals)
        # The usual document is scored from the gold held flat and the submission's filled roles; any other from
        # its Templates.
        if isinstance(submission, CdaeSubmission):
            filled = submission.filled
        else:
            filled = lambda docid: [(t.frame, t.filled) for t in submission.get(docid, [])]  # noqa: E731
        for docid, held in gold.templates.items():
            found = score.score_flat(held, filled(docid)) if held and type(held[0]) is str else None  # one template
            if found is None:
                found = score([unflatten(flat) for flat in document_templates(held)], submission.get(docid, []))
            yield docid, found

    def compute_report(self, gold: CdaeGold, submission: Mapping[str, list[Template]]) -> dict[str, Any]:
        """``compute(gold, submission).to_dict()``, each document's statistics added to the sums and dropped as soon
        as they are made (``CeafTotals``; the role sums straight from the scoring, without a dictionary per role): a
        large file's statistics (a fifth of a kilobyte a document) are never held all at once. The same additions
        in the same order: the same report."""
        totals = CeafTotals(SIMILARITIES, PREFIX)
        rows: dict[str, dict[str, float]] = {}

        def each_document() -> Iterator[UnitStats]:
            for docid, stats in self._document_stats(gold, submission, totals.totals):
                rows[docid] = totals.unit_scores(stats)
                yield stats

        totals.extend(each_document(), roles=False)
        table = {"role": totals.role_scores(), self.per_unit_breakdown: rows}
        return ScoreReport(self.name, self.version, totals.micro_scores(), table, {}).to_dict()

    def aggregate(self, stats: Sequence[UnitStats]) -> dict[str, float]:
        return micro_scores(stats, SIMILARITIES, PREFIX)

    def weighted_metric(self, stats: Sequence[UnitStats], metric: str) -> WeightedMetric:
        # Imported here: only intervals need it, and its import is a part of `podium score`'s start-up.
        from scorers.families import weighted

        # ceaf_rme_{similarity}_{p,r,f1}: the matched similarity over the predicted or gold mentions.
        similarity, _, part = metric.removeprefix(PREFIX).rpartition("_")
        columns = (weighted.unit_column(stats, key) for key in (similarity, "predicted", "gold"))
        return weighted.prf(part, *columns)

    def breakdown(
        self, gold: CdaeGold, submission: Mapping[str, list[Template]], stats: Mapping[str, UnitStats]
    ) -> Breakdown:
        per_unit = unit_micro_scores(stats.values(), SIMILARITIES, PREFIX)  # each as self.aggregate([value])
        return {
            "role": role_scores(stats.values(), SIMILARITIES, PREFIX),
            self.per_unit_breakdown: dict(zip(stats, per_unit, strict=True)),
        }
