"""Parsed gold files, cached per process.

Parsing a phase's gold takes longer than most requests should, and every upload and every scoring
job needs it. An entry holds the gold beside its public view (what participants are given: ids,
sentences, documents): uploads are validated against the public view alone, so that no refusal can
depend on the answers; only scoring reads ``gold``. The cache key includes the gold's sha256 and the
scorer's name and options, so a changed gold or scorer setting can never be served from a stale entry.
Concurrent misses for the same key parse once: the others wait for that result.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.storage.blobs import read_blob
from app.storage.models import Blob, Competition, Phase, Task
from leaderboard.uncertainty import phase_seed
from scorers import Scorer, get_scorer
from scorers.split import Split

GoldKey = tuple[int, str, str, str]


@dataclass(frozen=True)
class ParsedGold:
    scorer: Scorer[Any, Any, Any]
    #: The gold, answers included: for scoring only.
    gold: Any
    #: ``scorer.public_view(gold)``: what submissions are validated against.
    public: Any


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

    def peek(self, key: GoldKey) -> ParsedGold | None:
        """The parsed gold for ``key`` if it is cached (no loading)."""
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
            return cached

    def get(self, key: GoldKey, gold_bytes: Callable[[], bytes]) -> ParsedGold:
        """The parsed gold for ``key``; on a miss ``gold_bytes()`` supplies the file to parse.

        Raises what the scorer raises (``UnknownScorer``, ``OptionsError``, ``InvalidGold``).
        """
        with self._lock:
            cached = self._entries.get(key)
            if cached is not None:
                self._entries.move_to_end(key)
                return cached
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            with self._lock:
                cached = self._entries.get(key)
            if cached is not None:
                return cached
            try:
                _, _, name, options = key
                scorer = get_scorer(name, json.loads(options))
                gold = scorer.parse_gold(gold_bytes())
                parsed = ParsedGold(scorer, gold, scorer.public_view(gold))
                with self._lock:
                    if self.size > 0:
                        self._entries[key] = parsed
                        while len(self._entries) > self.size:
                            self._entries.popitem(last=False)
            finally:
                with self._lock:
                    self._loading.pop(key, None)
            return parsed


@dataclass(frozen=True)
class GoldRef:
    """Which gold a phase is scored against, and with which scorer: plain values, usable after the
    session closed (a job holds one while it works)."""

    phase_id: int
    blob_id: int
    sha256: str
    scorer: str
    scorer_options: dict[str, Any]
    #: The phase's resampling seed (``leaderboard.uncertainty.phase_seed``) and whether its board shows
    #: intervals: a score's interval is computed with them when it is recorded.
    seed: int = 0
    intervals: bool = True
    #: For scoring programs: the phase's wall-time limit (seconds; None: the default) and whether a team
    #: reads the end of the program's stderr when its submission failed.
    time_limit: int | None = None
    show_stderr: bool = False
    #: The phase's private split (``scorers.split``), or None: a score then keeps the public units' report apart.
    split: Split | None = None

    @property
    def key(self) -> GoldKey:
        return gold_key(self.phase_id, self.sha256, self.scorer, self.scorer_options)


def gold_of(session: Session, phase_id: int) -> GoldRef:
    """The phase's gold and scorer, read with one query."""
    row = session.execute(
        select(
            Phase.gold_blob_id,
            Blob.sha256,
            Task.scorer,
            Task.scorer_options,
            Competition.slug.label("competition"),
            Task.slug.label("task"),
            Phase.slug.label("phase"),
            Phase.intervals,
            Phase.execution_time_limit,
            Phase.show_program_stderr,
            Phase.private_share,
            Phase.split_secret,
            Phase.private_board,
        )
        .join(Task, Task.id == Phase.task_id)
        .join(Competition, Competition.id == Task.competition_id)
        .join(Blob, Blob.id == Phase.gold_blob_id)
        .where(Phase.id == phase_id)
    ).one()
    return GoldRef(
        phase_id,
        row.gold_blob_id,
        row.sha256,
        row.scorer,
        dict(row.scorer_options or {}),
        seed=phase_seed(row.competition, row.task, row.phase),
        intervals=bool(row.intervals),
        time_limit=row.execution_time_limit,
        show_stderr=bool(row.show_program_stderr),
        split=phase_split(row.private_share, row.split_secret, row.private_board),
    )


def phase_split(share: float | None, secret: str | None, board: str) -> Split | None:
    """A phase's split from its columns, or None where it has none."""
    if share is None or not secret:
        return None
    return Split(share, secret, "all" if board == "all" else "private")


def parsed_gold(session: Session, ref: GoldRef, cache: GoldCache) -> ParsedGold:
    """The phase's parsed gold from the cache, read from the database on a miss. Raises what the
    scorer raises for a gold it cannot use (``ScorerError``)."""
    return cache.get(ref.key, lambda: read_blob(session, ref.blob_id))
