"""What scoring one predicted role of CEAF-RME costs, counted before any of the work is done.

The clean-up tests every pair of distinct strings of a predicted role, the similarities look at every (gold
mention, predicted mention) pair of the same document and role, and the soft similarity's LCS table has |g|·|p|
cells, so a role with 100,000 fillers or fillers of a million tokens would run for hours. ``role_work`` counts
that work for one predicted role, so that callers can refuse a file beyond a budget; the rest of scoring (the
matchings, whose matrices hold those pairs) is smaller. ``gold_role_sizes`` measures the gold side.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sized

from scorers.families.ceaf_templates import Template


def gold_role_sizes(
    templates: Iterable[Template], tokens: Callable[[str], Sized] | None = None
) -> dict[str, tuple[int, int]]:
    """Per filled role of a document's gold templates: its mentions and their tokens, over all templates.

    ``tokens`` gives a text's tokens (``TokenIds.of``, which keeps them for the similarities); by default each
    text is split here."""
    count = _split_count if tokens is None else tokens
    sizes: dict[str, tuple[int, int]] = {}
    for template in templates:
        for role, entities in template.filled.items():
            mentions, words = sizes.get(role, (0, 0))
            for entity in entities:
                mentions += len(entity)
                words += sum(map(len, map(count, entity)))
            sizes[role] = (mentions, words)
    return sizes


def _split_count(text: str) -> list[str]:
    return text.split()


def role_work(texts: Collection[str], gold: tuple[int, int], *, join: bool = True) -> tuple[int, int]:
    """At most how many string comparisons and token pairs one predicted role of distinct ``texts`` costs.

    ``gold`` bounds the role's gold side in the document: so many mentions holding so many tokens (an entry of
    ``gold_role_sizes``, or the limits every gold is held to). Comparisons: the pairs of texts the substring
    clean-up tests (with ``join``), plus the (gold mention, text) pairs the similarities look at; token pairs:
    the cells of the soft similarity's LCS tables for those pairs. Frames are not looked at, so this is an upper
    bound, summed over the predicted templates of a document (a multi-label gold frame whose labels repeat aside).
    """
    n = len(texts)
    comparisons = n * (n - 1) // 2 if join else 0
    mentions, tokens = gold
    return comparisons + mentions * n, tokens * sum(map(len, map(str.split, texts)))
