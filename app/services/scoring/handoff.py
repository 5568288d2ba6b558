"""Submissions parsed at upload, handed to their scoring job in the same process.

An upload is parsed against the gold's public view to validate it; in the embedded mode the job
that scores it runs in the same process moments later and would parse the same bytes again (for a
Task 2 run of 14 MB, half the server's work per submission). The upload leaves what it parsed here,
keyed by the gold's cache key and the file's sha256 as the submission row records it; the job's claim
takes it (once: an entry is removed when taken, so a scorer may consume what it is given) instead of
reading the blob, and reads and parses the blob on a miss. Nothing depends on the entry being there: a
job in another process, after a restart or once the entry was dropped, reads the blob as before, and
what is handed over is exactly what the job's own parse would give (the same bytes, the same public
view, the same limits).

Only the distributed mode's web tier must not keep entries (no job there takes them): the app makes
one only where its own pool scores. Entries are bounded by the bytes of their files and dropped
after ``max_age`` seconds, so submissions whose job never comes (a crash) cannot pile up; when full,
a new entry is not kept (the older ones are the next jobs to run).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from app.services.scoring.gold import GoldKey

#: Bytes of submitted files whose parsed form may wait for their jobs (about twice that in memory).
MAX_BYTES = 256 * 1024 * 1024
#: Seconds an entry may wait for its job.
MAX_AGE = 600.0


@dataclass(frozen=True)
class Parsed:
    """A submission as ``Scorer.parse_submission`` returned it."""

    submission: Any
    size: int
    at: float


class ParsedSubmissions:
    """Parsed uploads waiting for their job in this process; thread-safe."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_age: float = MAX_AGE) -> None:
        self.max_bytes = max_bytes
        self.max_age = max_age
        self._entries: dict[tuple[GoldKey, str], Parsed] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def put(self, gold: GoldKey, sha256: str, submission: Any, size: int) -> bool:
        """Keep ``submission`` (parsed from a file of ``size`` bytes with this ``sha256``) for its job;
        ``False`` where it does not fit."""
        now = time.monotonic()
        with self._lock:
            for key in [k for k, e in self._entries.items() if now - e.at > self.max_age]:
                self._bytes -= self._entries.pop(key).size
            key = (gold, sha256)
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            if self._bytes + size > self.max_bytes:
                return False
            self._entries[key] = Parsed(submission, size, now)
            self._bytes += size
            return True

    def take(self, gold: GoldKey, sha256: str) -> Parsed | None:
        """The entry for this gold and file, removed; ``None`` on a miss."""
        with self._lock:
            entry = self._entries.pop((gold, sha256), None)
            if entry is not None:
                self._bytes -= entry.size
            return entry

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
