"""``podium worker``'s choices: which queues, how many jobs at a time, the worker's name."""

from __future__ import annotations

import os
import socket

import pytest

from app.worker.run import default_concurrency, node_name, parse_queues


def test_queues_are_named_from_podiums_queues() -> None:
    assert parse_queues("scoring") == ("scoring",)
    assert parse_queues(" gpu , scoring,gpu ") == ("gpu", "scoring")
    with pytest.raises(ValueError, match="--queues must name some of scoring, gpu; got 'cpu'"):
        parse_queues("scoring,cpu")
    with pytest.raises(ValueError, match="got none"):
        parse_queues(" , ")


def test_a_gpu_worker_runs_one_job_at_a_time() -> None:
    assert default_concurrency(("gpu",)) == 1
    assert default_concurrency(("scoring", "gpu")) == 1
    assert default_concurrency(("scoring",)) == (os.cpu_count() or 1)


def test_a_worker_is_named_after_its_queues_process_and_machine() -> None:
    assert node_name(("scoring",)) == f"podium-scoring-{os.getpid()}@{socket.gethostname()}"
