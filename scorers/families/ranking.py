"""Ranking measures of trec_eval through pytrec_eval: MAP cut at k (``map_cut``) and R-precision (``Rprec``).

A run maps each query to ``{doc_id: score}``; higher scores rank first. trec_eval ranks by the score
converted to single precision (``float``), then breaks ties by doc id in descending ``strcmp`` order; we
let pytrec_eval, which embeds trec_eval, do the ranking, and add three things around it:

* ``prune`` keeps per query only the candidates that can reach rank max(cutoff, R): every candidate whose
  single-precision score is at least the depth-th largest one. Anything dropped ranks below that depth
  whatever the tie-breaking, so no number changes, and a 35-million-candidate run shrinks to a few dozen
  candidates a query before it is copied into trec_eval's structures. ``prune_lists`` cuts many lists at once
  (one array of all their scores), the same cut without numpy's per-call cost for each list.
* query and doc ids are replaced by plain ASCII ids that keep the order of the doc ids, so the ranking
  is unchanged while ids that trec_eval mishandles (a NUL character cuts a C string short, a lone
  surrogate crashes pytrec_eval) cannot reach it.
* gold queries that a run leaves out count 0 when asked (pytrec_eval silently leaves them out); an
  empty candidate list always scores 0.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

# numpy is imported inside the functions that use it, so that loading the scorer library (``podium score`` of a
# scorer that never needs it, the web tier) does not pay its import.
if TYPE_CHECKING:
    import numpy as np


R_PRECISION = "r_precision"


def measure_names(cutoffs: Iterable[int]) -> list[str]:
    """The reported names, ``map@k`` for each cutoff (ascending) and ``r_precision``."""
    return [f"map@{k}" for k in sorted(set(cutoffs))] + [R_PRECISION]


def depth(cutoffs: Iterable[int], n_relevant: int) -> int:
    """How many top-ranked candidates the measures look at: the largest cutoff, or R if that is larger."""
    return max(max(cutoffs), n_relevant)


#: Lists ``prune`` cuts in plain Python before it turns to numpy: numpy cuts a list of 500 in half the time, but
#: importing it costs as much as cutting a few thousand lists, most of the time of a small run (``podium score``).
PLAIN_PRUNES = 2000
#: Lists ``evaluate`` cuts together.
EVALUATED_LISTS = 4096
_pruned = 0


def expect_many() -> None:
    """Cut with numpy from the next list on: for a caller about to cut far more than ``PLAIN_PRUNES`` lists (a large
    run), whose first plain-Python cuts would cost more than importing numpy saves (a tenth of a 10x Task 2 run's
    time). Both ways cut alike (``prune_lists``)."""
    global _pruned
    _pruned = max(_pruned, PLAIN_PRUNES)


def prune(candidates: Mapping[str, float], keep: int) -> dict[str, float]:
    """The candidates that can rank in the top ``keep`` (ties at the boundary are all kept), in their order, each
    score as a float."""
    global _pruned
    if len(candidates) <= keep:
        return dict(candidates)
    if _pruned < PLAIN_PRUNES:
        _pruned += 1
        # The same cut as _reachable's: C floats (array's "f" is the C cast numpy's astype makes, an overflow
        # included), the keep-th largest of them the boundary, every candidate at or above it kept.
        values = list(map(float, candidates.values()))
        single = array("f", values).tolist()
        boundary = heapq.nlargest(keep, single)[-1]
        return dict(itertools.compress(zip(candidates, values, strict=True), map(boundary.__le__, single)))
    import numpy as np

    scores = np.fromiter(candidates.values(), dtype=np.float64, count=len(candidates))
    chosen = _reachable(scores, keep)
    names = list(candidates)
    return dict(zip(map(names.__getitem__, chosen.tolist()), scores[chosen].tolist(), strict=True))


def prune_lists(lists: Sequence[Mapping[str, float]], keep: int | Sequence[int]) -> list[dict[str, float]]:
    """``[prune(candidates, keep) for candidates in lists]`` (``keep``: one depth for all, or one a list), the lists
    cut together rather than by numpy's calls for each (a few microseconds a call, most of cutting a list of 500).

    One array holds the scores of every list to cut, one list after the other. A list whose single-precision scores
    never rise (a run written best first, as most are) has its keep-th largest score at its index keep - 1, so every
    such list's boundary is read at once and its kept candidates are its first ones; a list whose scores rise
    somewhere has its boundary found by ``np.partition`` as ``prune`` finds it. Then one comparison,
    ``single >= boundary``, as ``prune``'s: the same candidates, order and values.
    """
    keeps = [keep] * len(lists) if isinstance(keep, int) else list(keep)
    if _pruned < PLAIN_PRUNES:
        return list(map(prune, lists, keeps))
    out = [dict(candidates) if len(candidates) <= depth else {} for candidates, depth in zip(lists, keeps, strict=True)]
    cut = [i for i, (candidates, depth) in enumerate(zip(lists, keeps, strict=True)) if len(candidates) > depth]
    if cut:
        names, counts, kept_scores = _cut_lists([lists[i] for i in cut], [keeps[i] for i in cut])
        kept = iter(kept_scores.tolist())
        for i, ids, count in zip(cut, names, counts, strict=True):
            out[i] = dict(zip(ids, itertools.islice(kept, count), strict=True))
    return out


def _cut_lists(
    lists: Sequence[Mapping[str, float]], keeps: Sequence[int]
) -> tuple[list[Iterable[str]], list[int], np.ndarray[Any, Any]]:
    """The cut of ``prune_lists`` of lists longer than their depths: each list's kept ids and count, and the kept
    scores of all, one list after the other, as doubles."""
    global _pruned
    import numpy as np

    _pruned += len(lists)
    lengths = np.fromiter(map(len, lists), np.intp, len(lists))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    depths = np.fromiter(keeps, np.intp, len(lists))
    scores = np.fromiter(itertools.chain.from_iterable(c.values() for c in lists), np.float64, int(ends[-1]))
    single = single_precision(scores)
    boundary = single[starts + depths - 1]
    # Where a score exceeds the one before it, within a list (not at its first candidate).
    rises = np.flatnonzero(single[1:] > single[:-1]) + 1
    owners = np.searchsorted(ends, rises, side="right")
    unsorted = set(np.unique(owners[rises != starts[owners]]).tolist())
    for j in unsorted:
        at = int(lengths[j] - depths[j])
        boundary[j] = np.partition(single[starts[j] : ends[j]], at)[at]
    chosen = single >= np.repeat(boundary, lengths)
    counts = np.add.reduceat(chosen, starts, dtype=np.intp).tolist()
    names: list[Iterable[str]] = [
        itertools.compress(candidates, chosen[starts[j] : ends[j]].tolist())
        if j in unsorted
        else itertools.islice(candidates, count)
        for j, (candidates, count) in enumerate(zip(lists, counts, strict=True))
    ]
    return names, counts, scores[chosen]


class KeptLists(Mapping[str, Mapping[str, float]]):
    """Cut candidate lists by query, as a run holds them until it is scored: the doc ids of all lists in one list and
    their scores, all floats, in one array, rather than a dictionary and a float object a candidate. Those, made while
    a large run is read and kept among the objects of the lists read after them, cost more than a quarter of the
    reading's time at 100x (each list read after them scattered among them). A list put in with ``add_floats`` or
    cut by numpy in ``add_cut`` is given back as a new dictionary equal to the one ``prune_lists`` gives (the same
    ids in the same order, the same floats); one put in with ``add`` or cut in plain Python (a small run) as
    itself."""

    def __init__(self) -> None:
        self._lists: dict[str, tuple[int, int] | Mapping[str, float]] = {}
        self._ids: list[str] = []
        self._scores = array("d")

    def add_floats(self, query: str, candidates: Mapping[str, float]) -> None:
        """Keep ``candidates``, whose scores are all floats (which an array of doubles holds exactly)."""
        start = len(self._ids)
        self._ids.extend(candidates)
        self._scores.extend(candidates.values())
        self._lists[query] = (start, len(self._ids))

    def add_cut(self, queries: Sequence[str], lists: Sequence[Mapping[str, float]], keep: int) -> None:
        """Keep ``lists``, whose scores are all floats, cut as ``prune_lists(lists, keep)`` cuts them, under
        ``queries``; where numpy cuts them all, without making their dictionaries and floats."""
        if _pruned < PLAIN_PRUNES:  # a small run: its lists as they are, which costs nothing more
            for query, kept in zip(queries, prune_lists(lists, keep), strict=True):
                self.add(query, kept)
            return
        if min(map(len, lists), default=0) <= keep:
            for query, kept in zip(queries, prune_lists(lists, keep), strict=True):
                self.add_floats(query, kept)
            return
        names, counts, scores = _cut_lists(lists, [keep] * len(lists))
        start = len(self._ids)
        for query, ids, count in zip(queries, names, counts, strict=True):
            self._ids.extend(ids)
            self._lists[query] = (start, start + count)
            start += count
        self._scores.frombytes(scores.tobytes())

    def add(self, query: str, candidates: Mapping[str, float]) -> None:
        """Keep ``candidates`` as they are (scores of any type)."""
        self._lists[query] = candidates

    def __getitem__(self, query: str) -> Mapping[str, float]:
        kept = self._lists[query]
        if isinstance(kept, tuple):
            start, stop = kept
            return dict(zip(self._ids[start:stop], self._scores[start:stop], strict=True))
        return kept

    def __contains__(self, query: object) -> bool:
        return query in self._lists

    def __iter__(self) -> Iterator[str]:
        return iter(self._lists)

    def __len__(self) -> int:
        return len(self._lists)

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def top_ranked(docnos: Sequence[str], scores: np.ndarray[Any, Any], keep: int) -> list[int]:
    """Indices of the ``keep`` first documents in trec_eval's order, best first.

    trec_eval sorts by the single-precision score, descending, then by doc id in descending ``strcmp``
    order (Python compares ``str`` by code point, which is the byte order of their UTF-8 form). This is
    the ranking that its ``-M`` option cuts. Only the candidates that can reach the top ``keep`` (every
    one whose single-precision score is at least the ``keep``-th largest) are sorted in Python.
    """
    import numpy as np

    candidates = np.arange(len(docnos)) if keep >= len(docnos) else _reachable(scores, keep)
    chosen = candidates.tolist()
    single = single_precision(scores[candidates]).tolist()
    order = sorted(range(len(chosen)), key=lambda i: (single[i], docnos[chosen[i]]), reverse=True)
    return [chosen[i] for i in order[:keep]]


def _reachable(scores: np.ndarray[Any, Any], keep: int) -> np.ndarray[Any, Any]:
    """Indices of the scores that can rank in the top ``keep`` (``keep`` < their number; boundary ties all kept)."""
    import numpy as np

    # trec_eval holds scores as C floats: scores equal in single precision are ties.
    single = single_precision(scores)
    boundary = np.partition(single, len(single) - keep)[len(single) - keep]
    return np.flatnonzero(single >= boundary)


def single_precision(scores: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    # A double beyond the float range becomes +-inf in trec_eval's C float as here: that is the warning silenced.
    import numpy as np

    with np.errstate(over="ignore"):
        return scores.astype(np.float32)


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    cutoffs: Sequence[int],
    *,
    missing_as_zero: bool = True,
) -> dict[str, dict[str, float]]:
    """Per gold query, ``map@k`` for each cutoff and ``r_precision``, as trec_eval computes them.

    ``qrels`` maps queries to ``{doc_id: relevance}`` (relevant when >= 1). Queries of ``run`` that
    are not in ``qrels`` are ignored. A gold query absent from ``run`` scores 0 on every measure when
    ``missing_as_zero`` (otherwise it is left out, as pytrec_eval does); an empty list scores 0.
    """
    cuts = sorted(set(cutoffs))
    if not cuts or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in cuts):
        raise ValueError(f"cutoffs must be positive integers, not {list(cutoffs)!r}")
    names = measure_names(cuts)
    safe_qrels: dict[str, dict[str, int]] = {}
    safe_run: dict[str, dict[str, float]] = {}
    ranked = [(number, query, judged) for number, (query, judged) in enumerate(qrels.items()) if query in run]
    depths = [depth(cuts, sum(1 for rel in judged.values() if rel >= 1)) for _, _, judged in ranked]
    # Cut a few thousand lists at a time: a run held as ``KeptLists`` makes each list anew when it is looked up.
    for at in range(0, len(ranked), EVALUATED_LISTS):
        part = ranked[at : at + EVALUATED_LISTS]
        kept_lists = prune_lists([run[query] for _, query, _ in part], depths[at : at + EVALUATED_LISTS])
        for (number, _, judged), kept in zip(part, kept_lists, strict=True):
            safe_qrels[f"q{number}"], safe_run[f"q{number}"] = _rename(judged, kept)
    results = _trec_eval(safe_qrels, safe_run, cuts) if safe_qrels else {}
    # Each reported name and the trec_eval measure it reads, in the order of ``names``.
    reported = [*((f"map@{k}", f"map_cut_{k}") for k in cuts), (R_PRECISION, "Rprec")]
    out: dict[str, dict[str, float]] = {}
    for number, query in enumerate(qrels):
        values = results.get(f"q{number}")
        if values is not None:
            out[query] = {name: float(values[measure]) for name, measure in reported}
        elif query in run or missing_as_zero:
            out[query] = dict.fromkeys(names, 0.0)
    return out


def _rename(judged: Mapping[str, int], kept: Mapping[str, float]) -> tuple[dict[str, int], dict[str, float]]:
    """ASCII doc ids whose ``strcmp`` order is the order of the original ids (the tie-breaking order).

    Python orders strings by code point, which is the byte order of their UTF-8 form, the order
    trec_eval's ``strcmp`` sees. Judged documents outside ``kept`` are never ranked, so any distinct
    id will do for them; a kept one's id is found at its place among the sorted ids (``bisect``). The run is
    given in the order of its ids: trec_eval sorts it by score and doc id, one order whatever the order given.
    """
    names = sorted(kept)
    ids = _ids(len(names))
    safe_judged = {
        (ids[bisect.bisect_left(names, doc)] if doc in kept else f"j{i}"): rel
        for i, (doc, rel) in enumerate(judged.items())
    }
    return safe_judged, dict(zip(ids, map(float, map(kept.__getitem__, names)), strict=True))


@functools.lru_cache(maxsize=64)
def _ids(count: int) -> tuple[str, ...]:
    """``d0`` ... as ``_rename`` numbers ``count`` documents, zero-padded to one width (most lists are cut to the
    same few lengths, so each is written once)."""
    width = len(str(count))
    return tuple(f"d{i:0{width}d}" for i in range(count))


def _trec_eval(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], cuts: Sequence[int]
) -> dict[str, dict[str, float]]:
    # The extension directly, imported here: pytrec_eval's Python wrapper imports numpy (most of a small run's time)
    # for nothing these measures need. What the wrapper adds is kept: queries without judgements are left out
    # (the extension fails on them) and an empty run gives no results.
    from pytrec_eval_ext import RelevanceEvaluator

    measures = {f"map_cut.{','.join(map(str, cuts))}", "Rprec"}
    judged = {query: judgements for query, judgements in qrels.items() if judgements}
    if not run:
        return {}
    results: dict[str, dict[str, float]] = RelevanceEvaluator(judged, measures, 1, 0).evaluate(run)
    return results
