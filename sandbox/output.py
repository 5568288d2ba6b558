"""What a run wrote: the size of its writable folders and logs against its output limit, and the ends of its logs."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from sandbox.limits import Limits


def tree_size(folder: Path, max_entries: int) -> tuple[int, int]:
    """Bytes and entries under ``folder`` (links not followed); stops counting past ``max_entries``."""
    total, entries, stack = 0, 0, [str(folder)]
    while stack and entries <= max_entries:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        continue
        except OSError:
            continue
    return total, entries


def over(limits: Limits, watched: Sequence[Path]) -> bool:
    """Whether the files and folders ``watched`` hold more bytes or entries than ``limits`` allow."""
    total = entries = 0
    for path in watched:
        if path.is_dir():
            size, count = tree_size(path, limits.output_entries)
            total, entries = total + size, entries + count
        else:
            with contextlib.suppress(OSError):
                total += path.stat().st_blocks * 512
    return total > limits.output_bytes or entries > limits.output_entries


def tail(path: Path, keep: int) -> tuple[bytes, int]:
    """The last ``keep`` bytes of the file at ``path``, and its whole size."""
    with path.open("rb") as file:
        size = os.fstat(file.fileno()).st_size
        file.seek(max(0, size - keep))
        return file.read(keep), size
