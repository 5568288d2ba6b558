"""CEAF-RME's entity similarities: ``phi3`` (exact mentions) and ``soft`` (token LCS through rapidfuzz).

Texts are compared as lowercased whitespace tokens, numbered once (``TokenIds``) and shared by everything that
counts or compares tokens (the gold's limits, the soft similarity).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from scorers.families.ceaf_templates import Entity

EntitySimilarity = Callable[[Entity, Entity], float]


def _indel() -> Any:
    """rapidfuzz's Indel metric, imported on first use (a ``from`` import per similarity costs more than the
    similarity itself)."""
    global _INDEL
    if _INDEL is None:
        from rapidfuzz.distance import Indel

        _INDEL = Indel
    return _INDEL


_INDEL: Any = None


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token lists (rapidfuzz's Indel distance, in C).

    The Indel distance is the edit distance with insertions and deletions only, |a| + |b| - 2·LCS.
    """
    distance: int = _indel().distance(a, b)
    return (len(a) + len(b) - distance) // 2


def token_similarity(gold: str, predicted: str) -> float:
    """2·LCS / (|g| + |p|) on lowercased whitespace tokens, the official 1 - distance / length.

    Two texts without any token (never so for gold that passed validation) count as equal.
    """
    # rapidfuzz's Indel normalized similarity, 1 - (|g| + |p| - 2·LCS) / (|g| + |p|): the same operations as the
    # official formula, so the same double (1.0 for two empty lists).
    ids = TokenIds()
    return float(_indel().normalized_similarity(ids.of(gold), ids.of(predicted)))


def _tokens(text: str) -> list[str]:
    # Lowercasing first splits the same (no character lowercases to or from whitespace) and is faster.
    return text.lower().split()


class TokenIds:
    """Each distinct text's lowercased whitespace tokens as numbers, split once and shared by everything that
    counts or compares tokens (the gold's limits, the soft similarity). ``vocabulary`` numbers each distinct
    token; ``ids`` holds the numbers of each text seen. Numbers, not strings: rapidfuzz compares the elements of a
    sequence by their hash, exact for small integers, where two distinct strings could share one. Lowercasing
    does not change how many tokens a text has (no character lowercases to or from whitespace), so
    ``len(of(text))`` is ``len(text.split())``."""

    __slots__ = ("ids", "vocabulary")

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.ids: dict[str, tuple[int, ...]] = {}

    def of(self, text: str) -> tuple[int, ...]:
        found = self.ids.get(text)
        if found is None:
            vocabulary = self.vocabulary
            found = self.ids[text] = tuple([vocabulary.setdefault(token, len(vocabulary)) for token in _tokens(text)])
        return found

    def reader(self) -> Callable[[str], tuple[int, ...]]:
        """Token ids of any text, numbered as these texts are, without changing this object (which may be shared
        by concurrent scorings): a token not in ``vocabulary`` gets a number past it, the same for every text
        read through this reader, so equal tokens get equal numbers and distinct ones distinct numbers."""
        known, vocabulary = self.ids, self.vocabulary
        more: dict[str, int] = {}
        seen: dict[str, tuple[int, ...]] = {}
        base = len(vocabulary)

        def number(token: str) -> int:
            found = vocabulary.get(token)
            if found is None:
                found = more.get(token)
                if found is None:
                    found = more[token] = base + len(more)
            return found

        def read(text: str) -> tuple[int, ...]:
            found = known.get(text)
            if found is None:
                found = seen.get(text)
                if found is None:
                    found = seen[text] = tuple([number(token) for token in _tokens(text)])
            return found

        return read


def phi3(gold: Entity, predicted: Entity) -> float:
    """Number of predicted mentions whose text is one of the gold entity's mentions."""
    if len(gold) == 1 and len(predicted) == 1:  # most entities: no set to build
        return 1.0 if gold[0] == predicted[0] else 0.0
    wanted = set(gold)
    return float(sum(1 for text in predicted if text in wanted))


def soft_similarity(
    cache: dict[tuple[str, str], float] | None = None, tokens: Callable[[str], Sequence[int]] | None = None
) -> EntitySimilarity:
    """The ``soft`` entity similarity: best ``token_similarity`` over mention pairs (memoised in ``cache``).

    ``tokens`` gives a text's token ids (``TokenIds.reader``); by default each text is split once here."""
    memo = {} if cache is None else cache
    if tokens is None:
        tokens = TokenIds().of
    similarity = _indel().normalized_similarity

    def soft(gold: Entity, predicted: Entity) -> float:
        best = 0.0
        for g in gold:
            for p in predicted:
                if g == p:  # equal texts are equal token lists: similarity 1.0 exactly, which no pair exceeds
                    return 1.0
                value = memo.get((g, p))
                if value is None:
                    value = memo[(g, p)] = float(similarity(tokens(g), tokens(p)))
                if value > best:
                    best = value
        return best

    return soft
