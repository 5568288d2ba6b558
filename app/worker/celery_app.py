"""The Celery application of the distributed mode: one task that runs any kind of job.

``make_celery(settings)`` builds it without connecting to anything. A message names a kind of job
and a row (``app.worker.broker``): the task looks the kind up in ``app.services.jobs.registry`` and
calls its function, the very one the embedded pool calls, with a ``JobContext`` of this process.

For the ``celery`` command line (``celery -A app.worker.celery_app inspect active``) the module
has a lazily built ``app`` made from the environment's settings.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from functools import lru_cache
from typing import Any

from celery import Celery

from app.config import Settings, load_settings
from app.services.jobs.kinds import JobContext
from app.services.jobs.registry import UnknownJob, kind_named
from app.services.scoring.gold import GoldCache
from app.storage.db import Database
from app.worker.broker import TASK_NAME, celery_config
from app.worker.celery_queue import CeleryQueue

log = logging.getLogger(__name__)


class ProcessContext:
    """One ``JobContext`` per process: a prefork child must not use connections opened by its parent."""

    def __init__(self, settings: Settings, celery: Celery) -> None:
        self.settings = settings
        self.celery = celery
        self._lock = threading.Lock()
        self._pid = 0
        self._ctx: JobContext | None = None

    def get(self) -> JobContext:
        with self._lock:
            if self._ctx is None or self._pid != os.getpid():
                # No ping before each transaction: a job retries transient errors, a connection the
                # database closed among them (the pool then replaces it).
                db = Database.from_settings(self.settings, pre_ping=False)
                queue = CeleryQueue(self.celery, db, self.settings)
                # A prefork pool child: its parent is the worker process that ``podium worker`` started.
                name = f"{socket.gethostname()}:{os.getppid()}/{os.getpid()}"
                gold = GoldCache(self.settings.gold_cache_size)
                self._ctx = JobContext(db, self.settings, gold, queue=queue, name=name, pool_child=True)
                self._pid = os.getpid()
            return self._ctx


def make_celery(settings: Settings) -> Celery:
    """The Celery app for ``settings`` (nothing connects until a message is sent or a worker starts)."""
    if not settings.broker_url:
        raise ValueError("PODIUM_BROKER_URL is not set: the distributed mode needs a Redis or RabbitMQ broker")
    celery = Celery("podium", set_as_current=False)
    celery.conf.update(celery_config(settings))
    contexts = ProcessContext(settings, celery)

    # shared=False: the task belongs to this app alone, not to every app made later in the process.
    @celery.task(name=TASK_NAME, shared=False)  # type: ignore[untyped-decorator]  # Celery has no type hints
    def job(name: str, *ids: int) -> None:
        try:
            kind = kind_named(name)
        except UnknownJob as exc:  # a message from a newer Podium, or a typo in a hand-made one
            log.error("%s; message dropped", exc)
            return
        if len(ids) != 1:
            log.error("a %s message names %d rows, not one; message dropped", name, len(ids))
            return
        kind.run(contexts.get(), ids[0])

    return celery


@lru_cache(maxsize=1)
def _environment_app() -> Celery:
    return make_celery(load_settings())


def __getattr__(name: str) -> Any:
    # ``celery -A app.worker.celery_app`` looks for ``app``; built on first use, never at import.
    if name in ("app", "celery"):
        return _environment_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
