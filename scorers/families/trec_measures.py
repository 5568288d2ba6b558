"""trec_eval 9.0.8 measures by their output names, computed per query by pytrec_eval and averaged as trec_eval does.

A measure is named as trec_eval prints it: ``map``, ``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``,
``Rprec_mult_0.20``, ``utility_2,-1,0,0``, ``ndcg_1=3,2=9``, ... (``parse_measure``). Every numeric measure that
pytrec_eval embeds is offered; ``runid`` and ``relstring`` are text, not numbers, and are not. The name carries
trec_eval's parameter syntax: cutoff measures (``P``, ``recall``, ``relative_P``, ``success``, ``map_cut``,
``ndcg_cut``) need one integer cutoff; ``iprec_at_recall`` and ``Rprec_mult`` a value with two decimals, as trec_eval
prints it; ``utility`` (a,b,c,d), ``11pt_avg`` (recall points) and ``set_F`` (beta) optional numbers, and ``ndcg``,
``ndcg_rel``, ``Rndcg`` and ``G`` optional ``level=gain`` pairs, printed verbatim after an underscore.

Per query, ``Evaluator`` asks pytrec_eval's extension for the requested measures; each parameter set of the
single-valued parameterised measures needs an evaluator of its own (pytrec_eval names all of them by their root).
The parameters are checked here first: trec_eval aborts the whole process on some bad ones (a cutoff of 0).

Over queries (``aggregate``), as trec_eval averages each measure: ``num_ret``, ``num_rel``, ``num_rel_ret`` and
``num_nonrel_judged_ret`` are summed, ``num_q`` counts the queries, ``gm_map`` and ``gm_bpref`` are geometric means
(per query trec_eval keeps log(max(value, 1e-5)), which is what the statistics hold), every other one is the mean.
With ``complete`` (trec_eval's ``-c``), queries of the judgements that a run lacks count with 0 everywhere
(``missing_query``; log(1e-5) for gm_*), and ``num_rel`` is, as trec_eval 9.0.8 computes it there, the number of
judgements above 0 in all queries (not those at or above the relevance level).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scorers.families import trec_eval_queries, weighted
from scorers.families.weighted import WeightedMetric

# numpy is imported inside the functions that use it, so that loading the scorer library (``podium score`` of a
# scorer that never needs it, the web tier) does not pay its import.
if TYPE_CHECKING:
    from scorers.families.weighted import Array

#: trec_eval's floor before the logarithm of a geometric mean (``MIN_GEO_MEAN``).
GM_FLOOR = 1e-5
#: The unit statistic that holds a query's judgements above 0 (what ``num_rel`` sums with ``complete``).
JUDGED_RELEVANT = "judged_relevant"

# How a root takes parameters: none, integer cutoffs, two-decimal cutoffs, numbers, or level=gain pairs.
NONE, CUTOFF, DECIMAL, NUMBERS, GAINS = "none", "cutoff", "decimal", "numbers", "gains"
# How a measure is averaged over queries, and how its value reads.
MEAN, SUM, COUNT, GEOMETRIC = "mean", "sum", "count", "geometric"
FRACTION, INTEGER, NUMBER = "fraction", "integer", "number"

_ROOTS: dict[str, tuple[str, str, str]] = {
    # root: (parameters, averaging, value)
    "num_q": (NONE, COUNT, INTEGER),
    "num_ret": (NONE, SUM, INTEGER),
    "num_rel": (NONE, SUM, INTEGER),
    "num_rel_ret": (NONE, SUM, INTEGER),
    "num_nonrel_judged_ret": (NONE, SUM, INTEGER),
    "map": (NONE, MEAN, FRACTION),
    "gm_map": (NONE, GEOMETRIC, FRACTION),
    "Rprec": (NONE, MEAN, FRACTION),
    "bpref": (NONE, MEAN, FRACTION),
    "gm_bpref": (NONE, GEOMETRIC, FRACTION),
    "recip_rank": (NONE, MEAN, FRACTION),
    "infAP": (NONE, MEAN, FRACTION),
    "binG": (NONE, MEAN, FRACTION),
    "set_P": (NONE, MEAN, FRACTION),
    "set_relative_P": (NONE, MEAN, FRACTION),
    "set_recall": (NONE, MEAN, FRACTION),
    "set_map": (NONE, MEAN, FRACTION),
    "P": (CUTOFF, MEAN, FRACTION),
    "recall": (CUTOFF, MEAN, FRACTION),
    "relative_P": (CUTOFF, MEAN, FRACTION),
    "success": (CUTOFF, MEAN, FRACTION),
    "map_cut": (CUTOFF, MEAN, FRACTION),
    "ndcg_cut": (CUTOFF, MEAN, FRACTION),
    "iprec_at_recall": (DECIMAL, MEAN, FRACTION),
    "Rprec_mult": (DECIMAL, MEAN, FRACTION),
    "utility": (NUMBERS, MEAN, NUMBER),
    "11pt_avg": (NUMBERS, MEAN, FRACTION),
    "set_F": (NUMBERS, MEAN, FRACTION),
    "ndcg": (GAINS, MEAN, NUMBER),
    "ndcg_rel": (GAINS, MEAN, NUMBER),
    "Rndcg": (GAINS, MEAN, NUMBER),
    "G": (GAINS, MEAN, NUMBER),
}
#: The output names of trec_eval's defaults for the measures that need a parameter here (for messages).
DEFAULT_CUTOFFS = {"success": "1, 5, 10", "iprec_at_recall": "0.00, 0.10, ..., 1.00", "Rprec_mult": "0.20, ..., 2.00"}
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)"
_PATTERNS = {
    CUTOFF: re.compile(r"[1-9]\d{0,8}"),
    DECIMAL: re.compile(r"(?:0|[1-9]\d{0,5})\.\d\d"),
    NUMBERS: re.compile(rf"{_NUMBER}(?:,{_NUMBER})*"),
    GAINS: re.compile(rf"\d{{1,4}}={_NUMBER}(?:,\d{{1,4}}={_NUMBER})*"),
}
_COUNTS = {"utility": (4, 4), "set_F": (1, 1), "11pt_avg": (1, 101)}


@dataclass(frozen=True)
class Measure:
    """A requested measure: its output name, trec_eval root and parameter string (None: the root's defaults)."""

    name: str
    root: str
    params: str | None

    @property
    def averaging(self) -> str:
        return _ROOTS[self.root][1]

    @property
    def value(self) -> str:
        """``fraction`` (in [0, 1]), ``integer`` (a count) or ``number`` (utility, gains: any real)."""
        return _ROOTS[self.root][2]

    @property
    def keyed_by_params(self) -> bool:
        """Whether pytrec_eval's result name tells this parameter apart (cutoffs) or is the bare root."""
        return _ROOTS[self.root][0] in (CUTOFF, DECIMAL)


def names() -> list[str]:
    """The measure roots on offer, in trec_eval's order."""
    return list(_ROOTS)


def parse_measure(name: str) -> Measure:
    """The measure behind an output name; ``ValueError`` says what is wrong with the name."""
    if not isinstance(name, str):
        raise ValueError(f"a measure name is a string, not {name!r}")
    root = max((r for r in _ROOTS if name == r or name.startswith(r + "_")), key=len, default=None)
    if root is None:
        raise ValueError(f"unknown trec_eval measure {name!r}; known: {', '.join(_ROOTS)}")
    kind = _ROOTS[root][0]
    params = name[len(root) + 1 :] if name != root else None
    if params is None:
        if kind in (CUTOFF, DECIMAL):
            defaults = DEFAULT_CUTOFFS.get(root, "5, 10, 15, 20, 30, 100, 200, 500, 1000")
            raise ValueError(
                f"measure {root!r} needs a cutoff, as in {root}_{defaults.split(',')[0]} (trec_eval's: {defaults})"
            )
        return Measure(name, root, None)
    if kind == NONE:
        raise ValueError(f"measure {root!r} takes no parameter, so {name!r} is not a trec_eval measure")
    if not _PATTERNS[kind].fullmatch(params):
        raise ValueError(f"{name!r}: {_SYNTAX[kind].format(root=root)}")
    _check_values(name, root, params)
    return Measure(name, root, params)


_SYNTAX = {
    CUTOFF: "{root} takes one positive integer cutoff, as in {root}_10",
    DECIMAL: "{root} takes one value written with two decimals as trec_eval prints it, as in {root}_0.20",
    NUMBERS: "{root} takes comma-separated numbers, as in trec_eval's -m {root}.<numbers>",
    GAINS: "{root} takes comma-separated level=gain pairs, as in {root}_1=1,2=3",
}


def _check_values(name: str, root: str, params: str) -> None:
    if root == "iprec_at_recall" and not 0 <= float(params) <= 1:
        raise ValueError(f"{name!r}: a recall level lies between 0.00 and 1.00")
    if root == "Rprec_mult" and float(params) <= 0:
        raise ValueError(f"{name!r}: the multiple of R must be above 0")
    if root in _COUNTS:
        values = [float(v) for v in params.split(",")]
        low, high = _COUNTS[root]
        if not low <= len(values) <= high:
            count = f"{low}" if low == high else f"{low} to {high}"
            raise ValueError(f"{name!r}: {root} takes {count} number(s), not {len(values)}")
        if root == "11pt_avg" and not all(0 <= v <= 1 for v in values):
            raise ValueError(f"{name!r}: recall points lie between 0 and 1")
        if root == "set_F" and values[0] < 0:
            raise ValueError(f"{name!r}: beta must not be negative")
    if _ROOTS[root][0] == GAINS:
        levels = [pair.split("=")[0] for pair in params.split(",")]
        if len({int(level) for level in levels}) != len(levels):
            raise ValueError(f"{name!r}: a relevance level is given two gains")


def parse_measures(given: Iterable[str]) -> list[Measure]:
    """Parse a list of output names; a repeated name or an empty list is a ``ValueError``."""
    measures = [parse_measure(name) for name in given]
    if not measures:
        raise ValueError("at least one measure is needed (the first is the primary metric)")
    seen = [m.name for m in measures]
    repeated = sorted({n for n in seen if seen.count(n) > 1})
    if repeated:
        raise ValueError(f"measure(s) listed twice: {', '.join(repeated)}")
    return measures


class Evaluator:
    """pytrec_eval evaluators for a set of measures over fixed judgements; ``evaluate`` runs them on a run."""

    def __init__(
        self,
        qrels: Mapping[str, Mapping[str, int]],
        measures: Sequence[Measure],
        *,
        relevance_level: int = 1,
        judged_docs_only: bool = False,
    ) -> None:
        # The extension directly: the wrapper's measure parser refuses trec_eval's syntax for negative numbers,
        # '=' and a leading '.' (utility_2,-1,0,0, ndcg_1=3, 11pt_avg_.25), and copies the judgements again.
        from pytrec_eval_ext import RelevanceEvaluator

        self.measures = list(measures)
        self._groups = _groups(self.measures)
        qrels = trec_eval_queries.handed_over(qrels)
        self._evaluators = [
            RelevanceEvaluator(qrels, requested, relevance_level, int(judged_docs_only))
            for requested, _ in self._groups
        ]

    def evaluate(self, run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Per query of ``run`` that has judgements: each measure's value as trec_eval accumulates it."""
        out: dict[str, dict[str, float]] = {}
        if not run:
            return out
        run = trec_eval_queries.handed_over(run)
        for evaluator, (_, keys) in zip(self._evaluators, self._groups, strict=True):
            for query, values in trec_eval_queries.named_back(evaluator.evaluate(run)).items():
                row = out.setdefault(query, {})
                for name, key in keys.items():
                    row[name] = float(values[key])
        return out


def _groups(measures: Sequence[Measure]) -> list[tuple[set[str], dict[str, str]]]:
    """The measure strings each pytrec_eval evaluator is given, and its result key of each output name.

    Cutoffs of one root share an evaluator (one name each); each parameter set of the other parameterised roots
    goes to the next evaluator in which its root is still free, since pytrec_eval names them all by the root.
    """
    cutoffs: dict[str, list[str]] = {}
    groups: list[tuple[dict[str, str], dict[str, str]]] = []  # (root -> measure string, output name -> key)
    for measure in measures:
        if measure.keyed_by_params:
            cutoffs.setdefault(measure.root, []).append(measure.params or "")
            key = f"{measure.root}_{measure.params}"
            _slot(groups, measure.root, None)[1][measure.name] = key
            continue
        request = measure.root if measure.params is None else f"{measure.root}.{measure.params}"
        _slot(groups, measure.root, request)[1][measure.name] = measure.root
    out = []
    for requests, keys in groups:
        strings = {f"{root}.{','.join(cutoffs[root])}" if root in cutoffs else text for root, text in requests.items()}
        out.append((strings, keys))
    return out


def _slot(
    groups: list[tuple[dict[str, str], dict[str, str]]], root: str, request: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """The first group whose ``root`` is free or already asks for ``request`` (None: shared cutoffs)."""
    for group in groups:
        if root not in group[0] or group[0][root] == (request or root):
            group[0].setdefault(root, request or root)
            return group
    groups.append(({root: request or root}, {}))
    return groups[-1]


def missing_query(measures: Sequence[Measure]) -> dict[str, float]:
    """What a query the run lacks adds with ``complete``: 0, log(1e-5) for geometric means, 1 for num_q."""
    values = {GEOMETRIC: math.log(GM_FLOOR), COUNT: 1.0}
    return {m.name: values.get(m.averaging, 0.0) for m in measures}


def aggregate(
    records: Sequence[Mapping[str, Any]], measures: Sequence[Measure], *, complete: bool = False
) -> dict[str, float]:
    """Each measure over any multiset of per-query records, as trec_eval averages it (see the module docstring)."""
    out: dict[str, float] = {}
    n = len(records)
    for m in measures:
        if m.averaging == COUNT:
            out[m.name] = float(n)
        elif m.root == "num_rel" and complete:
            out[m.name] = float(math.fsum(r[JUDGED_RELEVANT] for r in records))
        elif m.averaging == SUM:
            out[m.name] = math.fsum(r[m.name] for r in records)
        elif not n:
            out[m.name] = 0.0
        elif m.averaging == GEOMETRIC:
            out[m.name] = math.exp(math.fsum(r[m.name] for r in records) / n)
        else:
            out[m.name] = math.fsum(r[m.name] for r in records) / n
    return out


def query_values(record: Mapping[str, Any], measures: Sequence[Measure]) -> dict[str, float]:
    """One query's numbers as ``trec_eval -q`` prints them (a geometric mean's own term: max(value, 1e-5))."""
    return {m.name: math.exp(record[m.name]) if m.averaging == GEOMETRIC else float(record[m.name]) for m in measures}


def weighted_metric(
    records: Sequence[Mapping[str, Any]], measure: Measure, *, complete: bool = False
) -> WeightedMetric:
    """``aggregate``'s number for ``measure`` on many weightings of ``records`` at once (NaN: no query)."""
    import numpy as np

    counts = np.ones(len(records))
    if measure.averaging == COUNT:
        return WeightedMetric(counts[:, None], lambda sums: sums[:, 0])
    if measure.averaging == SUM:
        key = JUDGED_RELEVANT if measure.root == "num_rel" and complete else measure.name
        return WeightedMetric(weighted.column(weighted.unit_column(records, key))[:, None], lambda sums: sums[:, 0])
    mean = weighted.ratio(weighted.unit_column(records, measure.name), counts)
    if measure.averaging == GEOMETRIC:
        return WeightedMetric(mean.columns, lambda sums: _exp(mean.finish(sums)))
    return mean


def _exp(values: Array) -> Array:
    import numpy as np

    return np.exp(values)
