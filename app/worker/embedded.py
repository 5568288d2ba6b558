"""The embedded pool: jobs in threads of the server process, so the default needs no broker.

It is a ``JobQueue``: committed jobs arrive through ``enqueue`` and wait in memory, in one lane per
queue of the distributed mode (each kind of job declares its queue): ``workers`` threads score
submissions, one thread runs hosted baselines, so a long run never holds up scoring. A job already
waiting or running is not queued twice.

Jobs are resumed the way every mode resumes them, by a ``Sweeper``: when the pool starts it takes
every waiting row (queued, or interrupted: running with an expired lease), since what waited in the
memory of a previous process is gone; afterwards its thread sends what ``dispatch.take_due`` finds
every ``sweep_seconds`` (rows queued while no pool ran, leases that expired).
"""

from __future__ import annotations

import logging
import queue
import threading
from datetime import timedelta

from app.services.jobs.kinds import GPU, QUEUES, JobContext, JobKind
from app.worker.sweeper import Sweeper

log = logging.getLogger(__name__)

Item = tuple[JobKind, int] | None  # None: stop


class EmbeddedPool:
    """Threads running jobs from in-memory lanes, plus a sweeper."""

    #: A job put in memory cannot be lost while this process lives (and when it dies, the next
    #: start takes every waiting row): its stamp counts as sent at once.
    confirms_sends = False

    def __init__(self, ctx: JobContext, workers: int, *, sweep_seconds: float | None = None) -> None:
        if workers < 1:
            raise ValueError("the embedded pool needs at least one worker thread")
        self.ctx = ctx
        self.workers = workers
        self._lanes: dict[str, queue.Queue[Item]] = {name: queue.Queue() for name in QUEUES}
        self._known: set[tuple[str, int]] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._busy = 0
        self._threads: list[threading.Thread] = []
        self._sweeper = Sweeper(ctx.db, self._send, ctx.settings, every=sweep_seconds)

    def _threads_per_lane(self) -> dict[str, int]:
        return {name: 1 if name == GPU else self.workers for name in QUEUES}

    # -- JobQueue --------------------------------------------------------------------------
    def enqueue(self, kind: JobKind, row_id: int) -> None:
        with self._lock:
            if (kind.name, row_id) in self._known:
                return
            self._known.add((kind.name, row_id))
        self._lanes[kind.queue].put((kind, row_id))

    def _send(self, kind: JobKind, row_id: int, again: bool = False) -> bool:
        self.enqueue(kind, row_id)
        return True

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Resume every job that waits in the database, then start the threads."""
        if self._threads:
            return
        self.ctx.queue = self
        try:
            self.sweep(everything=True)
        except Exception:  # the periodic sweep tries again
            log.warning("could not resume the jobs waiting in the database", exc_info=True)
        for lane, count in self._threads_per_lane().items():
            for n in range(count):
                thread = threading.Thread(target=self._work, args=(lane,), name=f"{lane}-{n + 1}", daemon=True)
                thread.start()
                self._threads.append(thread)
        self._sweeper.start(sweep_now=False)

    def stop(self, timeout: float = 10.0) -> None:
        """Let running jobs finish (up to ``timeout``); an unfinished one is resumed after its lease."""
        self._sweeper.stop(timeout)
        for lane, count in self._threads_per_lane().items():
            for _ in range(count):
                self._lanes[lane].put(None)
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no job waits or runs; ``False`` on timeout. For tests and benchmarks."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._known and self._busy == 0, timeout)

    def sweep(self, *, everything: bool = False) -> dict[str, list[int]]:
        """Enqueue the jobs the sweeper finds (``everything``: every waiting row, whenever it was
        sent); returns the row ids per kind of job."""
        return self._sweeper.sweep(requeue_after=timedelta(0) if everything else None)

    # -- threads ---------------------------------------------------------------------------
    def _work(self, lane: str) -> None:
        source = self._lanes[lane]
        while True:
            item = source.get()
            if item is None:
                return
            kind, row_id = item
            with self._lock:
                self._busy += 1
                # Forgotten as it starts, not as it ends: a row queued again while this job still runs (a
                # rescore accepted right after its score's commit) needs a message of its own, which the
                # dedup would drop while this one is known; a second message is harmless (one claim wins).
                self._known.discard((kind.name, row_id))
            try:
                kind.run(self.ctx, row_id)
            except Exception:  # a job must never take its thread down
                log.exception("job %s(%s) crashed", kind.name, row_id)
            finally:
                with self._idle:
                    self._busy -= 1
                    self._idle.notify_all()
