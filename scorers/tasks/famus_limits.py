"""FAMuS CDAE's size limits, and the cost budget a submission is held to before any clean-up.

The substring clean-up and the similarities do work that grows with pairs of strings, so a submission's cost is
bounded (``ceaf_cost.role_work``, with the gold side at the limits every gold is held to, not at the gold's own
sizes) and refused before any of that work starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorers.errors import Problems
from scorers.families.ceaf_cost import role_work
from scorers.tasks.famus_format import quote
from scorers.tasks.limits import SizeLimits, bound


@dataclass(frozen=True)
class CdaeLimits(SizeLimits):
    """Size limits of CDAE files. The release data and the published system outputs hold at most 2 templates
    in a document, 10 fillers in a role and fillers of 312 characters, and the gold at most 10 mentions of 40
    tokens in all for one role of a document. The first three apply to the gold too; the two ``gold_`` ones
    to the gold only; the budgets to submissions, bounding what they cost against any gold within those."""

    templates_per_document: int = bound(100, "templates accepted in one document (gold or predicted)")
    fillers_per_role: int = bound(500, "fillers accepted in one role of a template (gold: mentions)")
    filler_chars: int = bound(3_000, "characters accepted in one filler text (gold: mention text)")
    gold_mentions_per_role: int = bound(20, "mentions the gold may hold for one role of a document, all templates")
    gold_tokens_per_role: int = bound(
        100, "tokens the gold's mentions of one role of a document may hold in all (whitespace-separated)"
    )
    comparisons: int = bound(
        2_000_000,
        "string comparisons a submission may cost in all, at most: pairs of fillers of a role (substring "
        "clean-up), and each filler with max_gold_mentions_per_role gold mentions (similarities)",
    )
    token_pairs: int = bound(
        40_000_000,
        "token pairs the soft similarity may compare in all, at most: each filler's tokens times "
        "max_gold_tokens_per_role",
    )

    @property
    def gold_role(self) -> tuple[int, int]:
        """The most any gold holds for one role of a document: mentions, tokens (``ceaf_cost.role_work``)."""
        return self.gold_mentions_per_role, self.gold_tokens_per_role


DEFAULT_LIMITS = CdaeLimits()


#: Where a predicted role is: its docid, the template's index and the role name.
RolePlace = tuple[str, int, str]


class CdaeBudget:
    """Sums what a submission's roles will cost (``ceaf_cost.role_work``) and remembers the costliest role of
    each sum."""

    def __init__(self, limits: CdaeLimits, *, join: bool) -> None:
        self.limits = limits
        self.join = join
        self.comparisons = self.token_pairs = 0
        self.most_comparisons: tuple[int, RolePlace] = (0, ("", 0, ""))
        self.most_token_pairs: tuple[int, RolePlace] = (0, ("", 0, ""))

    def add(self, place: RolePlace, texts: set[str]) -> None:
        if not texts:  # an empty role costs nothing (role_work gives 0, 0)
            return
        comparisons, token_pairs = role_work(texts, self.limits.gold_role, join=self.join)
        self.comparisons += comparisons
        self.token_pairs += token_pairs
        if comparisons > self.most_comparisons[0]:
            self.most_comparisons = (comparisons, place)
        if token_pairs > self.most_token_pairs[0]:
            self.most_token_pairs = (token_pairs, place)

    def check(self, problems: Problems) -> None:
        for name, unit, total, (most, (docid, index, role)) in (
            ("comparisons", "string comparisons", self.comparisons, self.most_comparisons),
            ("token_pairs", "token pairs", self.token_pairs, self.most_token_pairs),
        ):
            if total > getattr(self.limits, name):
                what = f"{unit} in all, the most ({most}) for this role"
                problems.add(
                    f"document {quote(docid)}, template {index}, role {quote(role)}",
                    "the submission would cost " + self.limits.exceeded(name, total, what),
                )
