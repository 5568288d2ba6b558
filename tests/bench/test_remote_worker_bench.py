"""The remote worker benchmark runs end to end on three waiting runs and times every call (nothing here is
timed: only that each call was made, once per run)."""

from __future__ import annotations

from bench.remote_worker_bench import NAMES, run


def test_every_call_of_the_protocol_is_made_once_per_run() -> None:
    times = run(3)
    assert sorted(times) == sorted(NAMES)
    assert all(len(values) == 3 for values in times.values())
