"""Counting the garbage collector's passes, to check that parsing and scoring pause it (``scorers.io.gc_paused``)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import Any

#: Passes a paused step may still show: the caller's few allocations before the pause, and the one pass
#: that the first allocation after it triggers. Without the pause there is one per container created.
MAX_PASSES = 10


@contextlib.contextmanager
def collector_passes() -> Iterator[list[int]]:
    """Yield a list that gets the generation of every collector pass started inside the block.

    The threshold is set to 1 for the block, so that a running collector starts a pass at nearly every
    container allocated: the count then says whether the collector ran, independently of the input's size.
    """
    passes: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    threshold = gc.get_threshold()
    assert gc.isenabled()
    gc.callbacks.append(record)
    gc.set_threshold(1)
    try:
        yield passes
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(record)
