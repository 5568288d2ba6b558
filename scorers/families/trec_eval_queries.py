"""Query ids as trec_eval may be given them.

trec_eval (and so pytrec_eval) keeps what it prepared for the query it evaluated last under that query's id,
starting from, and returning after each evaluation to, the id ``no_query``: a query of that name is given the
prepared judgements of another query, or none (a MAP of 4.0, an nDCG of 10^14). Such a query is handed over
under a name no file can give (ids are whitespace-separated fields, so none holds a space) and its results
are named back. Written by hand: it works around trec_eval's own sentinel, which no library does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

#: trec_eval's id of "no query prepared yet".
NO_QUERY = "no_query"
#: What a query of that name is called while trec_eval evaluates it.
ALIAS = "no_query "

V = TypeVar("V")


def handed_over(by_query: Mapping[str, V]) -> Mapping[str, V]:
    """``by_query`` with a query named ``no_query`` renamed for trec_eval (the same mapping otherwise)."""
    if NO_QUERY not in by_query:
        return by_query
    return {ALIAS if query == NO_QUERY else query: value for query, value in by_query.items()}


def named_back(results: dict[str, V]) -> dict[str, V]:
    """trec_eval's results with the renamed query under its own name again."""
    if ALIAS in results:
        results[NO_QUERY] = results.pop(ALIAS)
    return results
