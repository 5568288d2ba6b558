"""Gold pairs for the secrecy test (``tests/scorers/test_secrecy.py``), one generator per registered scorer.

A generator draws a ``Pair``: two gold files with the same public inputs (the ids, sentences, documents a
phase publishes) and different answers, scorer options that make every size limit reachable with small
files, and submissions of every kind a participant may try: empty, partial, unknown ids, bad values,
beyond each size limit, complete and valid. The test checks that both golds give each submission the same
outcome and the same message, word for word, and the same sample submission (``Scorer.sample_submission``).

A new scorer adds a generator under its name in ``PAIRS`` (the test fails for a registered scorer without
one); the generators of the seed scorers are in this package's modules.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st


@dataclass(frozen=True)
class Pair:
    """Two golds that differ only in their answers, the options to load them with, and submissions."""

    gold_a: bytes
    gold_b: bytes
    submissions: tuple[bytes, ...]
    options: dict[str, Any] = field(default_factory=dict)


#: ``PAIRS[scorer name]`` draws a ``Pair`` for that scorer.
PairStrategy = Callable[[], st.SearchStrategy[Pair]]
PAIRS: dict[str, PairStrategy] = {}


def pairs_for(*names: str) -> Callable[[PairStrategy], PairStrategy]:
    """Declare a generator for the named scorers."""

    def add(strategy: PairStrategy) -> PairStrategy:
        for name in names:
            PAIRS[name] = strategy
        return strategy

    return add


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def jsonl(lines: list[Any]) -> bytes:
    return "\n".join(json.dumps(line) for line in lines).encode()


#: Files that are not the task's format at all.
GARBAGE: tuple[bytes, ...] = (b"", b"\xff\xfe", b"[]", b"null", b'"text"', b"{", b'{"a": 1, "a": 2}')

IDS = st.text(alphabet="abcdefghij0123", min_size=1, max_size=4)
