"""The Celery app's settings: what keeps a message from being lost when a worker dies."""

from __future__ import annotations

import pytest

from app.config import Settings
from app.worker.broker import TASK_NAME, queue_name
from app.worker.celery_app import make_celery


def test_messages_are_acknowledged_late_one_at_a_time_and_as_json() -> None:
    settings = Settings(broker_url="redis://127.0.0.1:6379/0", queue_prefix="staging-")
    celery = make_celery(settings)
    try:
        conf = celery.conf
        assert (conf.task_acks_late, conf.task_reject_on_worker_lost, conf.worker_prefetch_multiplier) == (
            True,
            True,
            1,
        )
        assert (conf.task_serializer, list(conf.accept_content), conf.task_ignore_result) == ("json", ["json"], True)
        assert conf.broker_connection_max_retries is None
        assert conf.broker_transport_options["socket_connect_timeout"] == settings.broker_timeout_seconds
        assert (conf.task_default_queue, conf.control_exchange) == ("staging-scoring", "staging-celery")
        assert TASK_NAME in celery.tasks
    finally:
        celery.close()
    assert queue_name(settings, "gpu") == "staging-gpu"


def test_rabbitmq_confirms_each_message() -> None:
    celery = make_celery(Settings(broker_url="amqp://guest:guest@127.0.0.1:5672//"))
    try:
        assert celery.conf.broker_transport_options == {"confirm_publish": True}
        assert celery.conf.task_default_queue == "scoring"
    finally:
        celery.close()


def test_there_is_no_celery_app_without_a_broker() -> None:
    with pytest.raises(ValueError, match="PODIUM_BROKER_URL is not set"):
        make_celery(Settings(broker_url=""))
