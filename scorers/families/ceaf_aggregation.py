"""CEAF-RME's micro scores: precision, recall and F1 per similarity from summed document (or role) sums."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scorers.base import prf
from scorers.families.ceaf import SIMILARITIES


class CeafTotals:
    """The sums behind ``micro_scores``, ``role_scores`` and ``unit_micro_scores``, gathered in one pass over the
    documents' statistics (``extend``, in document order), so that a caller need not hold every document's statistics
    at once (``podium score``'s report, ``FamusCdaeScorer.compute_report``). The three functions are this class
    over a whole list: the same additions in the same order, the same floats."""

    def __init__(
        self,
        similarities: Sequence[str] = SIMILARITIES,
        prefix: str = "ceaf_rme_",
        roles: Iterable[str] | None = None,
    ) -> None:
        self.names = names = tuple(similarities)
        self.wanted = None if roles is None else set(roles)
        self.predicted = self.gold = 0.0
        self.matched = dict.fromkeys(names, 0.0)
        self.keys = list(zip(names, _metric_keys(names, prefix), strict=True))
        # Each role's sums added in document order, as the micro sums are: the same floats.
        self.totals: dict[str, list[float]] = {}
        # Items with equal sums get one dictionary of scores, shared (read-only): the scores depend on the sums
        # alone, and most documents of a file share theirs with others (the release's 253 documents hold 109
        # distinct sums).
        self.seen: dict[tuple[Any, ...], dict[str, float]] = {}

    def extend(self, items: Iterable[Mapping[str, Any]], *, micro: bool = True, roles: bool = True) -> None:
        """Add each document's statistics, in order, to the micro sums and (``roles``) to its roles' sums: one loop
        over them all (a call per document took nearly twice as long for the micro sums)."""
        names, matched, totals, wanted = self.names, self.matched, self.totals, self.wanted
        default = names == SIMILARITIES and wanted is None  # both sums spelled out, no loop per role
        predicted, gold = self.predicted, self.gold
        for item in items:
            if micro:
                predicted += item["predicted"]
                gold += item["gold"]
                for name in names:
                    matched[name] += item[name]
            if not roles:
                continue
            if default:
                for role, sums in item["roles"].items():
                    total = totals.get(role)
                    if total is None:
                        total = totals[role] = [0.0] * 4
                    total[0] += sums["predicted"]
                    total[1] += sums["gold"]
                    total[2] += sums["phi3"]
                    total[3] += sums["soft"]
                continue
            for role, sums in item["roles"].items():
                if wanted is None or role in wanted:
                    total = totals.get(role)
                    if total is None:
                        total = totals[role] = [0.0] * (2 + len(names))
                    total[0] += sums["predicted"]
                    total[1] += sums["gold"]
                    for k, name in enumerate(names, 2):
                        total[k] += sums[name]
        self.predicted, self.gold = predicted, gold

    def unit_scores(self, item: Mapping[str, Any]) -> dict[str, float]:
        """``micro_scores`` of ``item`` alone (its row of the per-document breakdown), shared among equal sums."""
        names = self.names
        sums = (item["predicted"], item["gold"], *[item[name] for name in names])
        scores = self.seen.get(sums)
        if scores is None:
            predicted, gold = 0.0 + item["predicted"], 0.0 + item["gold"]
            scores = self.seen[sums] = {}
            for name, (p_key, r_key, f_key) in self.keys:
                scores[p_key], scores[r_key], scores[f_key] = prf(0.0 + item[name], predicted, gold)
        return scores

    def micro_scores(self) -> dict[str, float]:
        """The micro P/R/F1 per similarity of the documents added."""
        out: dict[str, float] = {}
        for name, (p_key, r_key, f_key) in self.keys:
            out[p_key], out[r_key], out[f_key] = prf(self.matched[name], self.predicted, self.gold)
        return out

    def role_scores(self) -> dict[str, dict[str, float]]:
        """The micro scores per role name of the documents added, by name."""
        out: dict[str, dict[str, float]] = {}
        for role in sorted(self.totals):
            total = self.totals[role]
            scores: dict[str, float] = {}
            for k, (_, (p_key, r_key, f_key)) in enumerate(self.keys, 2):
                scores[p_key], scores[r_key], scores[f_key] = prf(total[k], total[0], total[1])
            out[role] = scores
        return out


def micro_scores(
    stats: Iterable[Mapping[str, Any]], similarities: Sequence[str] = SIMILARITIES, prefix: str = "ceaf_rme_"
) -> dict[str, float]:
    """Micro P/R/F1 per similarity from summed document (or role) sums: ``{prefix}{name}_p``, ``_r``, ``_f1``."""
    totals = CeafTotals(similarities, prefix)
    totals.extend(stats, roles=False)
    return totals.micro_scores()


def unit_micro_scores(
    stats: Iterable[Mapping[str, Any]], similarities: Sequence[str] = SIMILARITIES, prefix: str = "ceaf_rme_"
) -> list[dict[str, float]]:
    """``micro_scores`` of each item alone (the per-document breakdown), the same numbers without a loop per item;
    items with equal sums share one dictionary (read-only, ``CeafTotals.unit_scores``)."""
    totals = CeafTotals(similarities, prefix)
    return [totals.unit_scores(item) for item in stats]


@functools.cache
def _metric_keys(similarities: tuple[str, ...], prefix: str) -> tuple[tuple[str, str, str], ...]:
    """The metric names of ``micro_scores``, written once: the breakdown asks for them once per document."""
    return tuple((f"{prefix}{name}_p", f"{prefix}{name}_r", f"{prefix}{name}_f1") for name in similarities)


def role_scores(
    stats: Iterable[Mapping[str, Any]],
    similarities: Sequence[str] = SIMILARITIES,
    prefix: str = "ceaf_rme_",
    roles: Iterable[str] | None = None,
) -> dict[str, dict[str, float]]:
    """Micro scores per role name over documents; only the names in ``roles`` when given."""
    totals = CeafTotals(similarities, prefix, roles)
    totals.extend(stats, micro=False)
    return totals.role_scores()
