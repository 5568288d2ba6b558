"""Benchmark inputs for ``trec``: invented qrels and a run of 1,000 queries with 1,000 ranked documents each.

Nothing comes from a release: docnos are ``d<number>``, each query has 100 judgements (grades 0 to 2, a few -1),
half of them among its retrieved documents, and scores with two decimals, so that ties occur and trec_eval's
tie-breaking is exercised. ``BenchInputs.write(folder, k)`` then renames the queries of each copy (``-c<k>``), so
the 10x run holds 10,000 queries of 1,000 documents.
"""

from __future__ import annotations

import random

from bench.enlarge import BenchInputs, Record, TextFile, slot

QUERIES = 1000
DOCUMENTS = 1000
JUDGED = 100
COLLECTION = 100_000


def trec_inputs(rng: random.Random, documents: int | None = None) -> BenchInputs:
    """The 1x qrels and run; ``documents`` per query (default 1,000)."""
    documents = documents or DOCUMENTS
    qrels: list[Record] = []
    run: list[Record] = []
    for number in range(QUERIES):
        query = f"q{number}"
        retrieved = rng.sample(range(COLLECTION), documents)
        judged = rng.sample(retrieved, min(JUDGED // 2, documents)) + rng.sample(range(COLLECTION), JUDGED // 2)
        grades = {f"d{doc}": rng.choice((0, 0, 0, 1, 1, 2, -1)) for doc in judged}
        qrels.append(
            Record.of(
                "".join(f"{slot(i)} 0 {d} {g}\n" for i, (d, g) in enumerate(grades.items())), [query] * len(grades)
            )
        )
        lines = (
            f"{slot(rank)}\tQ0\td{doc}\t{rank + 1}\t{rng.uniform(0, 20):.2f}\tbench\n"
            for rank, doc in enumerate(retrieved)
        )
        run.append(Record.of("".join(lines), [query] * documents))
    return BenchInputs(
        "trec",
        TextFile("qrels.txt", "", tuple(qrels), "", ""),
        TextFile("run.txt", "", tuple(run), "", ""),
        f"invented: {QUERIES:,} queries, {documents:,} ranked documents and {JUDGED} judgements each",
    )
