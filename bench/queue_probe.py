"""Where a worker's time goes, job by job: a plugin that ``bench/queue_bench.py --probe`` loads into
each ``podium worker`` (``PODIUM_PLUGINS=bench.queue_probe``).

Loaded in the worker's main process, it hooks every SQLAlchemy engine (statements, the time spent in
them, connections checked out of the pool, commits) and Celery's task signals (when each task
started and ended in which process). Prefork children inherit the hooks. Each process appends one
JSON line per task to ``PODIUM_PROBE_DIR/<pid>.jsonl``:

``{"pid", "start", "end", "statements", "db_s", "checkouts", "commits", "by_kind"}``

``start``/``end`` are ``time.time()`` at Celery's ``task_prerun``/``task_postrun``; the gap between
one task's end and the next one's start in the same process is time the process spent outside any
job (acknowledging, fetching the next message, Celery's own bookkeeping) or idle.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from celery import signals
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.pool import Pool

_local = threading.local()
_lock = threading.Lock()
_current: dict[str, Any] | None = None  # the task running in this process (concurrency 1)


def _out() -> Path:
    folder = Path(os.environ.get("PODIUM_PROBE_DIR", "."))
    return folder / f"{os.getpid()}.jsonl"


def _kind(statement: str) -> str:
    words = statement.lstrip().split(None, 1)
    return words[0].upper() if words else "?"


@event.listens_for(Engine, "before_cursor_execute")
def _before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
    _local.started = time.perf_counter()


@event.listens_for(Engine, "after_cursor_execute")
def _after(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
    task = _current
    if task is not None:
        with _lock:
            task["statements"] += 1
            task["db_s"] += time.perf_counter() - getattr(_local, "started", time.perf_counter())
            task["by_kind"][_kind(statement)] += 1


@event.listens_for(Engine, "commit")
def _commit(conn: Any) -> None:
    task = _current
    if task is not None:
        with _lock:
            task["commits"] += 1


@event.listens_for(Pool, "checkout")
def _checkout(*args: Any) -> None:
    # With pool_pre_ping every checkout costs one more round trip (a ping) before the first statement.
    task = _current
    if task is not None:
        with _lock:
            task["checkouts"] += 1


@signals.task_prerun.connect
def _prerun(**kwargs: Any) -> None:
    global _current
    _current = {
        "pid": os.getpid(),
        "start": time.time(),
        "statements": 0,
        "db_s": 0.0,
        "checkouts": 0,
        "commits": 0,
        "by_kind": Counter(),
    }


@signals.task_postrun.connect
def _postrun(**kwargs: Any) -> None:
    global _current
    task, _current = _current, None
    if task is None:
        return
    task["end"] = time.time()
    with _out().open("a", encoding="utf-8") as out:
        out.write(json.dumps(task) + "\n")
