"""``podium worker``: a Celery worker on some of Podium's queues, with a sweeper thread, and its ping.

The worker process runs Celery's prefork pool: each job runs in a child process (a scorer that
crashes or leaks takes only its child down) with a ``JobContext`` of its own. The sweeper thread
runs in the parent, started once the worker is ready; so every worker machine also sends again
the jobs whose message was lost, and no separate service is needed for that.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from celery import signals

from app.config import Settings
from app.services.jobs.kinds import GPU, QUEUES
from app.storage.db import Database
from app.worker.broker import queue_name
from app.worker.broker_marker import Marker
from app.worker.celery_app import make_celery
from app.worker.celery_queue import CeleryQueue
from app.worker.sweeper import Sweeper


def parse_queues(text: str) -> tuple[str, ...]:
    """The queues named in ``text`` (comma-separated), checked against Podium's queues."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in QUEUES]
    if not names or unknown:
        shown = ", ".join(repr(name) for name in unknown) or "none"
        raise ValueError(f"--queues must name some of {', '.join(QUEUES)}; got {shown}")
    return names


def default_concurrency(queues: tuple[str, ...]) -> int:
    """Jobs at a time: one on a GPU worker (one model in the GPU's memory), else one per CPU."""
    return 1 if GPU in queues else os.cpu_count() or 1


def node_name(queues: tuple[str, ...]) -> str:
    """A name unique on this machine, ending in ``@host`` so that ``--ping`` finds it."""
    return f"podium-{'-'.join(queues)}-{os.getpid()}@{socket.gethostname()}"


def run_worker(settings: Settings, queues: tuple[str, ...], concurrency: int | None, loglevel: str) -> int:
    """Run the worker until it is stopped (SIGTERM: finish the running jobs, then exit)."""
    celery = make_celery(settings)
    db = Database.from_settings(settings)
    sweeper = Sweeper(db, CeleryQueue(celery, db, settings).send, settings, marker=Marker(celery, settings))

    def start_sweeper(**_: Any) -> None:
        sweeper.start()

    def stop_sweeper(**_: Any) -> None:
        sweeper.stop()
        db.dispose()

    def forget_parent_connections(**_: Any) -> None:
        # A forked child must neither use nor close the sweeper's pooled connections.
        db.engine.dispose(close=False)

    signals.worker_ready.connect(start_sweeper, weak=False)
    signals.worker_shutdown.connect(stop_sweeper, weak=False)
    signals.worker_process_init.connect(forget_parent_connections, weak=False)
    argv = [
        "worker",
        f"--queues={','.join(queue_name(settings, queue) for queue in queues)}",
        f"--concurrency={concurrency or default_concurrency(queues)}",
        f"--hostname={node_name(queues)}",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
    ]
    code = celery.start(argv=argv)
    return int(code or 0)


def ping_local(settings: Settings, timeout: float = 3.0) -> list[str]:
    """The names of the workers on this machine that answer a ping within ``timeout`` seconds;
    raises what the broker's client raises when the broker cannot be reached."""
    celery = make_celery(settings)
    try:
        replies = celery.control.ping(timeout=timeout)
    finally:
        celery.close()
    suffix = f"@{socket.gethostname()}"
    return sorted(name for reply in replies for name in reply if name.endswith(suffix))
