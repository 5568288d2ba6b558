"""Podium's names on the broker and Celery's settings for it, shared by the senders and the workers.

A message is ``podium.job(job_name, row_id)`` on the queue of its kind (``scoring`` or ``gpu``, with
``settings.queue_prefix`` in front). What keeps a job from being lost or run twice lives in the
database (see ``app.services.jobs.dispatch``); the settings here only make sure a message is not
dropped while its job runs:

- late acknowledgement and a prefetch of one: a message is acknowledged only when its job ended,
  and a worker holds no more messages than it runs, so a worker that dies returns them (RabbitMQ at
  once; kombu's Redis transport only after its visibility timeout, an hour, so there a sweeper sends
  again the jobs of a dead worker's messages: ``app.worker.stranded``);
- a job whose worker process was killed is rejected back to the queue, not acknowledged;
- JSON only, no result backend (a job's outcome is on its row);
- a job sent again by a sweeper (resumed after its worker died, or lost with the broker) goes ahead
  of fresh ones: it has waited longer already. RabbitMQ's queues take priorities
  (``x-max-priority``; a queue declared before without them has to be deleted once, see the
  README); kombu's Redis transport keeps a list per priority and takes the lower numbers first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.config import Settings
from app.services.jobs.kinds import QUEUES

if TYPE_CHECKING:
    from kombu import Queue

#: The one Celery task: ``podium.job(job_name, row_id)``.
TASK_NAME = "podium.job"


def queue_name(settings: Settings, queue: str) -> str:
    """The broker's name for one of Podium's queues (``queue_prefix`` + ``scoring`` or ``gpu``)."""
    return f"{settings.queue_prefix}{queue}"


#: The highest priority a RabbitMQ queue of Podium's takes.
MAX_PRIORITY = 9


def is_redis(settings: Settings) -> bool:
    return settings.broker_url.startswith(("redis://", "rediss://", "unix://"))


def priority(settings: Settings, *, again: bool) -> int:
    """The priority of a message: a job sent again before fresh ones, on either broker."""
    if is_redis(settings):  # kombu's Redis transport takes its lists in ascending order
        return 0 if again else MAX_PRIORITY
    return MAX_PRIORITY if again else 0


def declared_queues(settings: Settings) -> list[Queue]:
    """Podium's queues as the broker declares them: on RabbitMQ with priorities. kombu is imported here, where a
    broker is used: the embedded mode's sweepers import this module and use none."""
    from kombu import Exchange, Queue

    arguments = None if is_redis(settings) else {"x-max-priority": MAX_PRIORITY}
    return [
        Queue(name, Exchange(name, type="direct"), routing_key=name, queue_arguments=arguments)
        for name in (queue_name(settings, queue) for queue in QUEUES)
    ]


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery's settings for Podium's broker (see the module's docstring for why each is set)."""
    timeout = settings.broker_timeout_seconds
    if is_redis(settings):
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
        "task_queues": declared_queues(settings),
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
