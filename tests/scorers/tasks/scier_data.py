"""Small SciER gold and submission builders shared by the SciER tests.

Document "A" has two sentences (tokens 0-5 and 6-9), document "B" one (tokens 0-4).
"""

from __future__ import annotations

import json
from typing import Any

GOLD_DOCS: list[dict[str, Any]] = [
    {
        "doc_id": "A",
        "doc_tokens": ["We", "use", "BERT", "on", "SQuAD", ".", "BERT", "is", "a", "model"],
        "sentences": [["We", "use", "BERT", "on", "SQuAD", "."], ["BERT", "is", "a", "model"]],
        "ner": [[[2, 2, "Method"], [4, 4, "Dataset"]], [[6, 6, "Method"]]],
        "relations": [[[2, 2, 4, 4, "Used-For"]], []],
    },
    {
        "doc_id": "B",
        "doc_tokens": ["X", "and", "Y", "are", "synonyms"],
        "sentences": [["X", "and", "Y", "are", "synonyms"]],
        "ner": [[[0, 0, "Method"], [2, 2, "Method"]]],
        "relations": [[[0, 0, 2, 2, "Synonym-Of"]]],
    },
]

# Hand-checked predictions (see the tests for the counts).
PREDICTED: dict[str, dict[str, Any]] = {
    "A": {
        "doc_id": "A",
        "predicted_ner": [[[2, 2, "Method"], [4, 4, "Task"]], [[6, 6, "Method"], [8, 9, "Method"]]],
        "predicted_relations": [[[2, 2, 4, 4, "Used-For"]], []],
    },
    "B": {
        "doc_id": "B",
        "predicted_ner": [[[0, 0, "Method"], [2, 2, "Method"]]],
        "predicted_relations": [[[2, 2, 0, 0, "Synonym-Of"]]],
    },
}


def jsonl(objects: list[Any]) -> bytes:
    """One JSON value per line, as a participant's file would hold them."""
    return "".join(json.dumps(obj) + "\n" for obj in objects).encode()


def gold_bytes(docs: list[dict[str, Any]] | None = None) -> bytes:
    return jsonl(docs if docs is not None else GOLD_DOCS)


def perfect_lines(docs: list[dict[str, Any]] | None = None, *, entities: bool = True) -> list[dict[str, Any]]:
    """A submission that repeats the gold rows (without entities for ``scier-re``), as a deep copy."""
    out = []
    for doc in json.loads(json.dumps(docs if docs is not None else GOLD_DOCS)):
        line: dict[str, Any] = {"doc_id": doc["doc_id"], "predicted_relations": doc["relations"]}
        if entities:
            line["predicted_ner"] = doc["ner"]
        out.append(line)
    return out


def predicted_lines(*, entities: bool = True) -> list[dict[str, Any]]:
    """The hand-checked predictions, deep-copied so a test may change them."""
    lines = json.loads(json.dumps([PREDICTED["A"], PREDICTED["B"]]))
    if not entities:
        for line in lines:
            del line["predicted_ner"]
    return list(lines)
