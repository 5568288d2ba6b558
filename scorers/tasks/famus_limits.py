"""FAMuS CDAE's size limits, the public view a submission is checked against, and the cost budget it is held to.

The substring clean-up and the similarities do work that grows with pairs of strings, so a submission's cost is
counted (``ceaf_cost.role_work``) and refused beyond a budget before any of that work starts. The gold side of
that count is not the gold's own role in each document (counting it would tell participants how many mentions a
role has) but one figure per phase, the largest role of the whole gold (``CdaePublic.largest_role``): a fact the
phase publishes with its format, so a refusal depends on the submission and the public view alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scorers.base import PublicIds
from scorers.errors import Problems
from scorers.families.ceaf_cost import role_work
from scorers.tasks.famus_format import quote
from scorers.tasks.limits import SizeLimits, bound


@dataclass(frozen=True)
class CdaeLimits(SizeLimits):
    """Size limits of CDAE files. The release data and the published system outputs hold at most 2 templates
    in a document, 10 fillers in a role and fillers of 312 characters; a gold role of a document holds at most 10
    mentions of 40 tokens in all, and 252 mentions of 320 tokens when each mention brings its coreference cluster
    (FAMuS's silver clusters; all the clusters of one document together hold at most 787 mentions, and 1,399
    tokens). The first three apply to the gold too (``fillers_per_role`` to submissions only: a gold role is
    bounded by the two ``gold_`` limits, over the document's templates); the budgets to submissions, whose
    fillers are counted against the phase's largest gold role (``CdaePublic``)."""

    templates_per_document: int = bound(100, "templates accepted in one document (gold or predicted)")
    fillers_per_role: int = bound(500, "fillers accepted in one role of a predicted template")
    filler_chars: int = bound(3_000, "characters accepted in one filler text (gold: mention text)")
    gold_mentions_per_role: int = bound(
        5_000, "mentions the gold may hold for one role of a document, all templates (coreference clusters included)"
    )
    gold_tokens_per_role: int = bound(
        20_000, "tokens the gold's mentions of one role of a document may hold in all (whitespace-separated)"
    )
    comparisons: int = bound(
        2_000_000,
        "string comparisons a submission may cost in all, at most: pairs of fillers of a role (substring "
        "clean-up), and each filler with the mentions of the phase's largest gold role (similarities)",
    )
    token_pairs: int = bound(
        40_000_000,
        "token pairs the soft similarity may compare in all, at most: each filler's tokens times the tokens of "
        "the phase's largest gold role",
    )


DEFAULT_LIMITS = CdaeLimits()


@dataclass(frozen=True)
class CdaePublic(PublicIds):
    """What a CDAE submission is checked against: the gold's docids and the largest role of the whole gold,
    ``(mentions, tokens)``: the most mentions one role of a document holds (over its templates), and the most
    tokens (whitespace-separated) one role's mentions hold in all, each the maximum over every role of every
    document. One figure per phase, published with its format (``largest_role_note``); nothing per document."""

    largest_role: tuple[int, int] = (0, 0)


def largest_role_words(largest_role: tuple[int, int]) -> str:
    """``12 mentions of 30 tokens``."""
    mentions, tokens = largest_role
    return f"{mentions} mention{'' if mentions == 1 else 's'} of {tokens} token{'' if tokens == 1 else 's'}"


def largest_role_note(public: CdaePublic, limits: CdaeLimits) -> str:
    """The phase's published figure, and what a submission's cost is counted with, in words."""
    return (
        f"The largest role of this phase's gold in one document holds {largest_role_words(public.largest_role)} "
        "in all. A submission's cost is counted against it before scoring: each predicted filler is compared with "
        "that many gold mentions and its tokens with that many gold tokens, plus the pairs of fillers of each role; "
        f"at most {limits.comparisons:,} string comparisons and {limits.token_pairs:,} token pairs in all are "
        "accepted (options max_comparisons, max_token_pairs)."
    )


#: Where a predicted role is: its docid, the template's index and the role name.
RolePlace = tuple[str, int, str]


class CdaeBudget:
    """Sums what a submission's roles will cost (``ceaf_cost.role_work``) and remembers the costliest role of
    each sum."""

    def __init__(self, limits: CdaeLimits, largest_role: tuple[int, int], *, join: bool) -> None:
        self.limits = limits
        self.largest_role = largest_role
        self.join = join
        self.comparisons = self.token_pairs = 0
        self.most_comparisons: tuple[int, RolePlace] = (0, ("", 0, ""))
        self.most_token_pairs: tuple[int, RolePlace] = (0, ("", 0, ""))

    def add_template(self, docid: str, index: int, flat: tuple[Any, ...]) -> None:
        """Add the roles of a document's template ``index``, held flat: its frame, then each role's name and its
        distinct filler texts (a collection, or one text alone)."""
        largest, join = self.largest_role, self.join
        mentions, tokens = largest
        total_comparisons, total_token_pairs = self.comparisons, self.token_pairs
        roles = iter(flat)
        next(roles)  # the frame
        for role, texts in zip(roles, roles, strict=True):
            if isinstance(texts, str):  # role_work of one text: no pair to clean up, each gold mention and token once
                comparisons, token_pairs = mentions, tokens * len(texts.split())
            elif texts:
                comparisons, token_pairs = role_work(texts, largest, join=join)
            else:  # an empty role costs nothing (role_work gives 0, 0)
                continue
            total_comparisons += comparisons
            total_token_pairs += token_pairs
            if comparisons > self.most_comparisons[0]:
                self.most_comparisons = (comparisons, (docid, index, role))
            if token_pairs > self.most_token_pairs[0]:
                self.most_token_pairs = (token_pairs, (docid, index, role))
        self.comparisons, self.token_pairs = total_comparisons, total_token_pairs

    def check(self, problems: Problems) -> None:
        for name, unit, total, (most, (docid, index, role)) in (
            ("comparisons", "string comparisons", self.comparisons, self.most_comparisons),
            ("token_pairs", "token pairs", self.token_pairs, self.most_token_pairs),
        ):
            if total > getattr(self.limits, name):
                what = f"{unit} in all, the most ({most}) for this role"
                problems.add(
                    f"document {quote(docid)}, template {index}, role {quote(role)}",
                    "the submission would cost "
                    + self.limits.exceeded(name, total, what)
                    + "; each filler is counted against the phase's largest gold role, "
                    + largest_role_words(self.largest_role),
                )
