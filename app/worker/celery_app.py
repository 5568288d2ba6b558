"""The Celery application of the distributed mode: one task that runs any job of ``app.worker.jobs``.

``make_celery(settings)`` builds it without connecting to anything. A message is ``(job, *ids)``:
the task re-reads the rows and calls the very function the embedded pool calls. What keeps a job
from being lost or run twice lives in the database (see ``app.services.jobs.dispatch``); the broker
settings here only make sure a message is not dropped while its job runs:

- late acknowledgement and a prefetch of one: a message is acknowledged only when its job ended,
  and a worker holds no more messages than it runs, so a worker that dies returns them;
- a job whose worker process was killed is rejected back to the queue, not acknowledged;
- JSON only, no result backend (a job's outcome is on its row).

For the ``celery`` command line (``celery -A app.worker.celery_app inspect active``) the module
has a lazily built ``app`` made from the environment's settings.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import lru_cache
from typing import Any

from celery import Celery

from app.config import Settings, load_settings
from app.services.jobs.dispatch import QUEUES
from app.services.scoring.gold import GoldCache
from app.storage.db import Database
from app.worker.jobs import JOBS, JobContext, run_job

log = logging.getLogger(__name__)

#: The one Celery task: ``podium.job(job_name, *ids)``.
TASK_NAME = "podium.job"


def queue_name(settings: Settings, queue: str) -> str:
    """The broker's name for one of Podium's queues (``queue_prefix`` + ``scoring`` or ``gpu``)."""
    return f"{settings.queue_prefix}{queue}"


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery's settings for Podium's broker (see the module's docstring for why each is set)."""
    timeout = settings.broker_timeout_seconds
    if settings.broker_url.startswith(("redis://", "rediss://", "unix://")):
        # Without a socket timeout a publish to a broker that vanished without closing the
        # connection (failover, NAT timeout) would wait forever.
        transport: dict[str, Any] = {"socket_connect_timeout": timeout, "socket_timeout": max(5.0, 2 * timeout)}
    else:
        transport = {"confirm_publish": True}  # RabbitMQ: a send returns once the broker has the message
    return {
        "broker_url": settings.broker_url,
        "broker_connection_timeout": timeout,
        "broker_connection_retry": True,
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a worker waits for its broker as long as it takes
        "broker_transport_options": transport,
        "task_serializer": "json",
        "accept_content": ["json"],
        "result_backend": None,
        "task_ignore_result": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # Each queue is a direct exchange and a queue of the same name (Celery's default), made by the
        # first send or worker that needs it.
        "task_default_queue": queue_name(settings, QUEUES[0]),
        # A send from a web request tries twice, briefly; a job not sent waits for the sweeper.
        "task_publish_retry_policy": {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5},
        # A job running when the broker connection drops keeps running: its outcome is written to the
        # database, and the message redelivered afterwards finds the row done.
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "worker_send_task_events": False,
        "task_send_sent_event": False,
        # Remote control (``podium worker --ping``) of Podium instances sharing a broker stays apart.
        "control_exchange": f"{settings.queue_prefix}celery",
        "enable_utc": True,
    }


class ProcessContext:
    """One ``JobContext`` per process: a prefork child must not use connections opened by its parent."""

    def __init__(self, settings: Settings, celery: Celery) -> None:
        self.settings = settings
        self.celery = celery
        self._lock = threading.Lock()
        self._pid = 0
        self._ctx: JobContext | None = None

    def get(self) -> JobContext:
        from app.worker.celery_queue import CeleryQueue

        with self._lock:
            if self._ctx is None or self._pid != os.getpid():
                db = Database(self.settings.database_url)
                queue = CeleryQueue(self.celery, db, self.settings)
                self._ctx = JobContext(db, self.settings, GoldCache(self.settings.gold_cache_size), queue=queue)
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
        if name not in JOBS:  # a message from a newer Podium, or a typo in a hand-made one
            log.error("no job named %r here (known: %s); message dropped", name, ", ".join(sorted(JOBS)))
            return
        run_job(contexts.get(), name, *ids)

    return celery


@lru_cache(maxsize=1)
def _environment_app() -> Celery:
    return make_celery(load_settings())


def __getattr__(name: str) -> Any:
    # ``celery -A app.worker.celery_app`` looks for ``app``; built on first use, never at import.
    if name in ("app", "celery"):
        return _environment_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
