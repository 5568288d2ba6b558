"""What boards built before computed and the next board reuses, bounded: an LRU keyed by what each value depends on.

The board cache (``AppState.boards``) holds one ``Kept``: the decoded numbers of scores
(``app.services.boards.standings``), the neighbour pairs' tests and the intervals of scores stored without one
(``app.services.boards.uncertainty``). Scores are immutable, so a value keyed by the scores it was computed from
never goes stale; a new score only adds its own. ``counts`` says how much work was done (scores read and decoded,
units read, pairs tested, intervals computed), for diagnostics and the tests that a score landing redoes only its
own share.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Hashable
from typing import Any

#: Values kept by default: a board of 10,000 entries of three submissions each needs about 50,000 (30,000 scores'
#: numbers, 10,000 tests, and intervals where a score stored none), a few hundred bytes each.
SIZE = 100_000


class Kept:
    """A thread-safe LRU of ``size`` values (0 keeps nothing), with counts of the work done to fill it."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        #: Work done so far, by kind ("scores read", "units read", "pairs tested", "intervals computed").
        self.counts: Counter[str] = Counter()

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key not in self._items:
                return False, None
            self._items.move_to_end(key)
            return True, self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            if self.size <= 0:
                return
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def count(self, kind: str, n: int = 1) -> None:
        """Note ``n`` more of ``kind`` of work (``counts``)."""
        if n:
            with self._lock:
                self.counts[kind] += n

    def __len__(self) -> int:
        return len(self._items)
