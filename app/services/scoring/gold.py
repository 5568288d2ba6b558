"""Parsed gold files, cached per process.

Parsing a phase's gold takes longer than most requests should, and every upload and every scoring
job needs it. The cache key includes the gold's sha256 and the scorer's name and options, so a
changed gold or scorer setting can never be served from a stale entry. Concurrent misses for the
same key parse once: the others wait for that result.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scorers import Scorer, get_scorer

GoldKey = tuple[int, str, str, str]


@dataclass(frozen=True)
class ParsedGold:
    scorer: Scorer[Any, Any]
    gold: Any


def gold_key(phase_id: int, gold_sha256: str, scorer: str, options: Mapping[str, Any]) -> GoldKey:
    return (phase_id, gold_sha256, scorer, json.dumps(options, sort_keys=True, default=str))


class GoldCache:
    """A small LRU of parsed gold files; thread-safe. ``size`` 0 disables caching."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._entries: OrderedDict[GoldKey, ParsedGold] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[GoldKey, threading.Lock] = {}

    def __contains__(self, key: GoldKey) -> bool:
        with self._lock:
            return key in self._entries

    def get(self, key: GoldKey, gold_bytes: Callable[[], bytes]) -> ParsedGold:
        """The parsed gold for ``key``; on a miss ``gold_bytes()`` supplies the file to parse.

        Raises what the scorer raises (``UnknownScorer``, ``OptionsError``, ``InvalidGold``).
        """
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            with self._lock:
                found = self._entries.get(key)
            if found is not None:
                return found
            try:
                _, _, name, options = key
                scorer = get_scorer(name, json.loads(options))
                parsed = ParsedGold(scorer, scorer.parse_gold(gold_bytes()))
                with self._lock:
                    if self.size > 0:
                        self._entries[key] = parsed
                        while len(self._entries) > self.size:
                            self._entries.popitem(last=False)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
            return parsed
