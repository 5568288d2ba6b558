"""Handing the memory of dropped input files back to the system (``release_freed_memory``)."""

from __future__ import annotations

import sys

#: Below this many bytes dropped nothing is done: a small scoring's start-up stays without ctypes.
RELEASE_FROM_BYTES = 4 * 2**20


def release_freed_memory(dropped_bytes: int) -> bool:
    """Ask the C library to give back to the system the free memory at the top and in the middle of its heap, once
    a caller has dropped ``dropped_bytes`` of input (a file's bytes, its text, the buffers of its reading); True if
    it was asked.

    glibc's malloc raises its mmap threshold to the largest block freed (up to 32 MiB) and its trim threshold to twice
    that. Once a large file's bytes are freed, the next buffers of that size (the submission's bytes and decoded text,
    a parse's lists) come from the heap and stay with the process after they are freed, while Python's own objects,
    the statistics scoring makes next, come from arenas of their own beside it: at FAMuS CDAE's 100x inputs, 12 MB of
    a scoring's peak. ``malloc_trim`` is glibc's call for it; Python has none, so it is called through ctypes. Where
    the C library has no such call (musl, other systems) nothing is done."""
    if dropped_bytes < RELEASE_FROM_BYTES or not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True
