"""Pausing the cyclic garbage collector while a large file is turned into objects (``gc_paused``)."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large file is turned into objects.

    Parsing allocates millions of containers and none of them form cycles, yet each
    allocation burst triggers a full collection pass: on the 100x inputs of PERFORMANCE.md
    that is about two thirds of the reading time. The pause must cover the whole parse, not
    only ``json.loads``: the tuples and records built from the parsed values right after it
    would make the collector walk everything parsed so far, again and again. Reference
    counting still frees memory. Nested and concurrent users share one counter, so the
    collector is enabled again when the last of them leaves, and only if it was enabled
    before the first came in. ``@gc_paused()`` also works as a function decorator.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()
