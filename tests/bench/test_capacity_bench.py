"""The capacity benchmark runs end to end at the smallest scale (one scorer, one client, two jobs) on the test
PostgreSQL server and Redis, and prints both tables (nothing here is timed)."""

from __future__ import annotations

import os

import pytest
import redis
from sqlalchemy.engine import make_url

from bench.capacity_bench import main
from bench.server_cost_bench import shared_dir


def test_the_bench_prints_a_row_per_step_and_per_scorer(capsys: pytest.CaptureFixture[str]) -> None:
    database = os.environ.get("PODIUM_TEST_DATABASE_URL", "")
    broker = os.environ.get("PODIUM_TEST_REDIS_URL", "")
    if not database.startswith("postgresql") or not broker:
        pytest.skip("needs PostgreSQL and Redis: set PODIUM_TEST_DATABASE_URL and PODIUM_TEST_REDIS_URL")
    try:
        redis.Redis.from_url(broker, socket_connect_timeout=2).ping()
    except redis.RedisError:
        pytest.skip(f"no Redis answers at {broker}")
    if not (shared_dir() / "data").is_dir():
        pytest.skip(f"the shared data folder is missing: {shared_dir() / 'data'} (set PODIUM_SHARED_DIR)")
    server = make_url(database).set(database="postgres").render_as_string(hide_password=False)
    main(
        [
            "--postgres",
            server,
            "--redis",
            broker,
            "--scorers",
            "svident-detection",
            "--clients",
            "1",
            "--step-seconds",
            "1",
            "--jobs",
            "2",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    steps = [line for line in lines if line.startswith("| svident-detection | ")]
    assert len(steps) == 2
    first = steps[0].split(" | ")
    assert first[2] == "1" and int(first[3]) > 0 and first[-1] == "0 |"  # one client, some uploads, no error
    summary = steps[1].split(" | ")
    assert len(summary) == 4 and float(summary[2]) > 0 and float(summary[3].rstrip(" |")) > 0
