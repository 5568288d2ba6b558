"""Hierarchical plain means over scored groups: the aggregation of grouped (macro-over-documents) metrics.

Some tasks score each group (a document, a (language, document) pair) on its own and then average the
groups without weighting them by size, possibly in stages: SV-Ident takes the mean over the groups of a
language, then the mean over languages. ``nested_mean`` does that for any multiset of group records, so a
subset or a bootstrap resample (repeats allowed) aggregates exactly as the whole does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def nested_mean(
    records: Sequence[Mapping[str, Any]], metrics: Sequence[str], levels: Sequence[str]
) -> dict[str, float]:
    """The mean of each metric over ``records``, taken level by level.

    With ``levels == ("language",)`` the records are split by their ``"language"`` value, each part is
    averaged, and the part means are averaged with equal weight; with ``levels == ()`` it is the plain
    mean over all records. Sums use ``math.fsum`` (exactly rounded) so the result does not depend on
    the order of the records. No records give 0.0 for every metric: nothing was scored.
    """
    if not records:
        return dict.fromkeys(metrics, 0.0)
    if not levels:
        return {m: math.fsum(float(r[m]) for r in records) / len(records) for m in metrics}
    level, inner = levels[0], levels[1:]
    parts: dict[Any, list[Mapping[str, Any]]] = {}
    for record in records:
        parts.setdefault(record[level], []).append(record)
    means = [nested_mean(part, metrics, inner) for part in parts.values()]
    return {m: math.fsum(mean[m] for mean in means) / len(means) for m in metrics}
