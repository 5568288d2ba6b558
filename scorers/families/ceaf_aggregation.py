"""CEAF-RME's micro scores: precision, recall and F1 per similarity from summed document (or role) sums."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scorers.base import prf
from scorers.families.ceaf import SIMILARITIES


def micro_scores(
    stats: Iterable[Mapping[str, Any]], similarities: Sequence[str] = SIMILARITIES, prefix: str = "ceaf_rme_"
) -> dict[str, float]:
    """Micro P/R/F1 per similarity from summed document (or role) sums: ``{prefix}{name}_p``, ``_r``, ``_f1``."""
    predicted = gold = 0.0
    matched = dict.fromkeys(similarities, 0.0)
    for item in stats:
        predicted += item["predicted"]
        gold += item["gold"]
        for name in similarities:
            matched[name] += item[name]
    out: dict[str, float] = {}
    for name, keys in zip(similarities, _metric_keys(tuple(similarities), prefix), strict=True):
        p, r, f = prf(matched[name], predicted, gold)
        out[keys[0]], out[keys[1]], out[keys[2]] = p, r, f
    return out


def unit_micro_scores(
    stats: Iterable[Mapping[str, Any]], similarities: Sequence[str] = SIMILARITIES, prefix: str = "ceaf_rme_"
) -> list[dict[str, float]]:
    """``micro_scores`` of each item alone (the per-document breakdown), the same numbers without a loop per item.

    Items with equal sums get one dictionary of scores, shared (read-only): the scores depend on the sums alone,
    and most documents of a file share theirs with others (the release's 253 documents hold 109 distinct sums)."""
    names = tuple(similarities)
    keys = list(zip(names, _metric_keys(names, prefix), strict=True))
    out = []
    seen: dict[tuple[Any, ...], dict[str, float]] = {}
    for item in stats:
        sums = (item["predicted"], item["gold"], *[item[name] for name in names])
        scores = seen.get(sums)
        if scores is None:
            predicted, gold = 0.0 + item["predicted"], 0.0 + item["gold"]
            scores = seen[sums] = {}
            for name, (p_key, r_key, f_key) in keys:
                scores[p_key], scores[r_key], scores[f_key] = prf(0.0 + item[name], predicted, gold)
        out.append(scores)
    return out


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
    wanted = None if roles is None else set(roles)
    names = tuple(similarities)
    # Each role's sums added in document order, as micro_scores adds them: the same floats, one pass.
    totals: dict[str, list[float]] = {}
    if names == SIMILARITIES and wanted is None:  # the default: both sums spelled out, no loop per role of a document
        for item in stats:
            for role, sums in item["roles"].items():
                total = totals.get(role)
                if total is None:
                    total = totals[role] = [0.0] * 4
                total[0] += sums["predicted"]
                total[1] += sums["gold"]
                total[2] += sums["phi3"]
                total[3] += sums["soft"]
    else:
        for item in stats:
            for role, sums in item["roles"].items():
                if wanted is None or role in wanted:
                    total = totals.get(role)
                    if total is None:
                        total = totals[role] = [0.0] * (2 + len(names))
                    total[0] += sums["predicted"]
                    total[1] += sums["gold"]
                    for k, name in enumerate(names, 2):
                        total[k] += sums[name]
    keys = _metric_keys(names, prefix)
    out: dict[str, dict[str, float]] = {}
    for role in sorted(totals):
        total = totals[role]
        scores: dict[str, float] = {}
        for k, (p_key, r_key, f_key) in enumerate(keys, 2):
            scores[p_key], scores[r_key], scores[f_key] = prf(total[k], total[0], total[1])
        out[role] = scores
    return out
