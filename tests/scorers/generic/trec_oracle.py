"""An independent reading of trec_eval 9.0.8 for a few measures, from its documentation, to test ``trec`` against.

Ranking: single-precision score descending, then docno descending by bytes; ``-M`` keeps the first n; ``-J`` then drops
documents without a judgement (not in the qrels, or judged below 0). A document is relevant at or above the level.
Averages: the mean over the queries both files have; with ``-c`` over every qrels query, a missing one counting 0,
num_rel then counting the judgements above 0 of all queries; gm_map is exp(mean(log(max(AP, 1e-5)))).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping

MEASURES = ["map", "gm_map", "P_1", "P_2", "P_5", "recall_2", "recip_rank", "Rprec", "success_1"]
COUNTS = ["num_q", "num_ret", "num_rel", "num_rel_ret"]


def single(value: float) -> float:
    """The value as a C float holds it (inf beyond the float range)."""
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def ranked(candidates: Mapping[str, float]) -> list[str]:
    by_docno = sorted(candidates, key=lambda d: d.encode("utf-8"), reverse=True)
    return sorted(by_docno, key=lambda d: single(candidates[d]), reverse=True)  # stable: ties keep docno order


def one_query(
    judged: Mapping[str, int], candidates: Mapping[str, float], *, level: int, judged_only: bool, keep: int | None
) -> dict[str, float]:
    order = ranked(candidates)[:keep] if keep is not None else ranked(candidates)
    if judged_only:
        order = [d for d in order if judged.get(d, -1) >= 0]
    relevant = [judged.get(d, -1) >= level for d in order]
    num_rel = sum(1 for r in judged.values() if r >= level)
    hits = 0
    precision_sum = 0.0
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            hits += 1
            precision_sum += hits / rank
    ap = precision_sum / num_rel if num_rel else 0.0
    first = next((rank for rank, r in enumerate(relevant, start=1) if r), None)
    return {
        "num_q": 1.0,
        "num_ret": float(len(order)),
        "num_rel": float(num_rel),
        "num_rel_ret": float(hits),
        "map": ap,
        "gm_map": math.log(max(ap, 1e-5)),
        "P_1": sum(relevant[:1]) / 1,
        "P_2": sum(relevant[:2]) / 2,
        "P_5": sum(relevant[:5]) / 5,
        "recall_2": sum(relevant[:2]) / num_rel if num_rel else 0.0,
        "recip_rank": 1 / first if first else 0.0,
        "Rprec": sum(relevant[:num_rel]) / num_rel if num_rel else 0.0,
        "success_1": float(any(relevant[:1])),
    }


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    *,
    level: int = 1,
    judged_only: bool = False,
    keep: int | None = None,
    complete: bool = False,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(the averages, the per-query numbers) over the queries trec_eval averages over."""
    per_query = {
        q: one_query(qrels[q], run[q], level=level, judged_only=judged_only, keep=keep) for q in qrels if q in run
    }
    names = COUNTS + MEASURES
    n = len(qrels) if complete else len(per_query)
    total = {m: sum(values[m] for values in per_query.values()) for m in names}
    averages = {m: total[m] / n if n else 0.0 for m in MEASURES}
    averages["gm_map"] = math.exp((total["gm_map"] + (n - len(per_query)) * math.log(1e-5)) / n) if n else 0.0
    averages.update(num_q=float(n), num_ret=total["num_ret"], num_rel_ret=total["num_rel_ret"])
    averages["num_rel"] = (
        float(sum(1 for judged in qrels.values() for r in judged.values() if r > 0)) if complete else total["num_rel"]
    )
    return averages, per_query
