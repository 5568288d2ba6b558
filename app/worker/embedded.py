"""The embedded pool: scoring jobs in threads of the server process, so the default needs no broker.

It is a ``JobQueue``: committed jobs arrive through ``enqueue``. A sweeper thread looks in the
database every few seconds for submissions that wait without a job here (queued while no pool ran,
or interrupted by a crash and now past their lease) and enqueues them; so after a restart every
queued and interrupted submission is resumed. A job already waiting or running is not queued twice.
Baseline runs (the ``gpu`` queue of the distributed mode) have a lane of their own with one thread,
so a long run never holds up scoring; the sweeper resumes them too.
"""

from __future__ import annotations

import logging
import queue
import threading

from app.services.baselines.runs import RUN_BASELINE
from app.worker.baseline_job import resume_runs
from app.worker.jobs import JobContext, resume, run_job

log = logging.getLogger(__name__)

_STOP = ("", ())
#: Jobs that run in the one-thread lane (the ``gpu`` queue of the distributed mode).
GPU_JOBS = frozenset({RUN_BASELINE})


class EmbeddedPool:
    """``workers`` threads running jobs from an in-memory queue, plus the sweeper."""

    def __init__(self, ctx: JobContext, workers: int, *, sweep_seconds: float | None = None) -> None:
        if workers < 1:
            raise ValueError("the embedded pool needs at least one worker thread")
        self.ctx = ctx
        self.workers = workers
        self.sweep_seconds = sweep_seconds if sweep_seconds is not None else ctx.settings.sweep_seconds
        self._queue: queue.Queue[tuple[str, tuple[int, ...]]] = queue.Queue()
        self._gpu_queue: queue.Queue[tuple[str, tuple[int, ...]]] = queue.Queue()
        self._known: set[tuple[str, tuple[int, ...]]] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._busy = 0
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- JobQueue --------------------------------------------------------------------------
    def enqueue(self, job: str, *args: int) -> None:
        item = (job, tuple(args))
        with self._lock:
            if item in self._known:
                return
            self._known.add(item)
        (self._gpu_queue if job in GPU_JOBS else self._queue).put(item)

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Resume what waits in the database, then start the threads."""
        if self._threads:
            return
        self.ctx.queue = self
        try:
            self.sweep()
        except Exception:  # the periodic sweep tries again
            log.warning("could not resume waiting submissions", exc_info=True)
        for n in range(self.workers):
            thread = threading.Thread(target=self._work, args=(self._queue,), name=f"scoring-{n + 1}", daemon=True)
            thread.start()
            self._threads.append(thread)
        gpu = threading.Thread(target=self._work, args=(self._gpu_queue,), name="gpu-1", daemon=True)
        gpu.start()
        self._threads.append(gpu)
        sweeper = threading.Thread(target=self._sweep, name="scoring-sweeper", daemon=True)
        sweeper.start()
        self._threads.append(sweeper)

    def stop(self, timeout: float = 10.0) -> None:
        """Let running jobs finish (up to ``timeout``); an unfinished one is resumed after its lease."""
        self._stopping.set()
        for _ in range(self.workers):
            self._queue.put(_STOP)
        self._gpu_queue.put(_STOP)
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no job waits or runs; ``False`` on timeout. For tests and benchmarks."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._known and self._busy == 0, timeout)

    def sweep(self) -> list[int]:
        """Enqueue every submission and baseline run that waits in the database (see ``jobs.resume``
        and ``baseline_job.resume_runs``); returns the submissions' ids."""
        resume_runs(self.ctx, self.enqueue)
        return resume(self.ctx, self.enqueue)

    # -- threads ---------------------------------------------------------------------------
    def _work(self, source: queue.Queue[tuple[str, tuple[int, ...]]]) -> None:
        while True:
            item = source.get()
            if item == _STOP:
                return
            job, args = item
            with self._lock:
                self._busy += 1
            try:
                run_job(self.ctx, job, *args)
            except Exception:  # a job must never take its thread down
                log.exception("job %s%r crashed", job, args)
            finally:
                with self._idle:
                    self._busy -= 1
                    self._known.discard(item)
                    self._idle.notify_all()

    def _sweep(self) -> None:
        while not self._stopping.wait(self.sweep_seconds):
            try:
                self.sweep()
            except Exception:
                log.warning("the scoring sweeper could not read the database", exc_info=True)
