"""Small SV-Ident gold files and submissions shared by the SV-Ident tests (arithmetic in the tests)."""

from __future__ import annotations

import json
from typing import Any

HEADER = ("sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang")


def make_gold(rows: list[tuple[str, str, str, str, str]], header: tuple[str, ...] = HEADER) -> bytes:
    """A release-style TSV from ``(uuid, lang, doc_id, is_variable, variable)`` rows."""
    lines = ["\t".join(header)]
    for uuid, lang, doc_id, is_variable, variable in rows:
        fields = {"sentence": f"Sentence {uuid}.", "is_variable": is_variable, "variable": variable}
        fields |= {"research_data": "ZA1" if variable else "", "doc_id": doc_id, "uuid": uuid, "lang": lang}
        lines.append("\t".join(fields[name] for name in header))
    return ("\n".join(lines) + "\n").encode()


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


DETECTION_GOLD = make_gold(
    [
        ("u1", "en", "d1", "1", "v1"),
        ("u2", "en", "d1", "1", "v2"),
        ("u3", "en", "d1", "0", ""),
        ("u4", "en", "d1", "0", ""),
        ("u5", "en", "d2", "1", "unk"),
        ("u6", "de", "d3", "0", ""),
        ("u7", "de", "d3", "0", ""),
    ]
)
# en/d1: gold 1 1 0 0, predicted 1 0 0 0 -> P 5/6, R 3/4, F 11/15 (label 1: P 1, R 1/2, F 2/3; label 0: P 2/3, R 1,
#        F 4/5). en/d2: gold 1, predicted 0 -> 0 everywhere. de/d3: all 0 in gold and predictions -> 1 everywhere.
# en = mean(en/d1, en/d2) = (5/12, 3/8, 11/30); de = 1; overall = ((5/12 + 1)/2, (3/8 + 1)/2, (11/30 + 1)/2).
DETECTION_RUN: dict[str, str | int] = {"u1": "1", "u2": 0, "u3": "0", "u4": 0, "u5": "0", "u6": 0, "u7": "0"}


RANKING_GOLD = make_gold(
    [
        ("q1", "en", "d1", "1", "a;b;unk"),  # query, relevant {a, b}
        ("q2", "en", "d1", "1", "c"),  # query, relevant {c}
        ("n1", "en", "d1", "0", ""),  # not a query
        ("n2", "en", "d1", "1", "unk"),  # not a query: only unk
        ("q3", "en", "d2", "1", "e"),  # query
        ("q4", "de", "d3", "1", "f;g;h"),  # query, relevant {f, g, h}
        ("n3", "de", "d4", "0", ""),  # a group without queries is not a unit
    ]
)
# q1: a x b -> AP@1 1/2 (1 of 2 relevant at rank 1), AP@5 = AP@10 = AP@20 = (1 + 2/3) / 2 = 5/6;
#     R = 2: the top 2 hold a -> 1/2.
# q2: x c -> AP@1 0, AP@5.. = 1/2; R = 1: 0.   q3: {} -> 0.   q4: f g h -> AP@1 1/3, AP@5.. 1; R 1.
# en/d1 = mean(q1, q2) = (1/4, 2/3, 2/3, 2/3, 1/4); en/d2 = 0; en = (1/8, 1/3, 1/3, 1/3, 1/8);
# de/d3 = (1/3, 1, 1, 1, 1); overall map@1 (1/8 + 1/3) / 2 = 11/48, map@k>1 (1/3 + 1) / 2 = 2/3, R-prec 9/16.
RANKING_RUN = {
    "q1": {"a": 0.9, "x": 0.5, "b": 0.1},
    "q2": {"x": 3, "c": 2},
    "q3": {},
    "q4": {"f": 1.0, "g": 0.5, "h": -1e30},
    "n1": {"anything": 1.0},
}
