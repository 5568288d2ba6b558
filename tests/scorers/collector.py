"""Counting the garbage collector's passes, to check that parsing and scoring pause it (``scorers.io.gc_paused``)."""

from __future__ import annotations

import contextlib
import gc
import threading
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

    Only passes started in the block's own thread count. A pass runs in the thread whose allocation triggered
    it, and the callbacks see every thread's: under pytest-xdist, execnet's reader thread wakes whenever the
    controller sends more tests and unpickles them, and with a threshold of 1 that is a dozen passes landing in
    whatever block is open, though the code under test allocated nothing more.
    """
    passes: list[int] = []
    thread = threading.get_ident()

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and threading.get_ident() == thread:
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
