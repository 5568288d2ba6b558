"""The queue benchmark's pure parts: quantiles, a run's numbers, the table and its section in
RESULTS.md (nothing here is timed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.queue_bench import (
    CPU_GROUPS,
    SECTION,
    Probe,
    Run,
    nearest_rank,
    render,
    render_probes,
    replace_section,
    summarize,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_nearest_rank_quantiles() -> None:
    values = [float(v) for v in range(1, 101)]  # 1..100
    assert nearest_rank(values, 0.5) == 50.0  # rank ceil(0.5 * 100) = 50
    assert nearest_rank(values, 0.99) == 99.0
    assert nearest_rank(values, 0.07) == 7.0  # 0.07 * 100 is 7.000000000000001 in floating point
    assert nearest_rank([3.0], 0.99) == 3.0


def test_a_run_counts_from_the_burst_to_the_last_score() -> None:
    # Three submissions uploaded at 0 s, committed at 0.5 s; scored at 1, 2 and 4 s after 0.5, 1.5, 3.5 s.
    rows = [(at(0), at(0.5), at(1)), (at(0), at(1.5), at(2)), (at(0), at(3.5), at(4))]
    run = summarize(1, at(0.5), rows)
    assert (run.submissions, run.seconds, run.p50_s, run.p99_s) == (3, 3.5, 2.0, 4.0)
    assert run.mean_scoring_s == 0.5
    assert run.throughput == 3 / 3.5


def test_the_table_gives_the_ratio_of_two_workers_to_one() -> None:
    one = Run(workers=1, submissions=100, seconds=10.0, p50_s=5.0, p99_s=9.9, mean_scoring_s=0.08)
    two = Run(workers=2, submissions=100, seconds=5.5, p50_s=2.8, p99_s=5.4, mean_scoring_s=0.09)
    table = render([one, two], "val.tsv", 19 * 1024)
    assert "| 1 | 100 | 10.00 | 10.0 | 5.00 s | 9.90 s | 80 ms |" in table
    assert "| 2 | 100 | 5.50 | 18.2 | 2.80 s | 5.40 s | 90 ms |" in table
    assert "Throughput, 2 workers / 1 worker: 1.82 (target: at least 1.8)." in table  # 18.18 / 10


def test_only_its_own_section_of_the_results_is_replaced() -> None:
    document = f"# Results\n\n## Intake\n\nkept\n\n{SECTION}\n\nold table\n\n## Baselines\n\nkept too\n"
    updated = replace_section(document, SECTION, "new table")
    assert updated == f"# Results\n\n## Intake\n\nkept\n\n{SECTION}\n\nnew table\n\n## Baselines\n\nkept too\n"
    assert replace_section("# Results\n", SECTION, "first") == f"# Results\n\n{SECTION}\n\nfirst\n"


def test_the_probe_counts_the_bursts_tasks_and_the_gaps_between_them(tmp_path: Path) -> None:
    # Process 11 ran a warm-up task (before the burst) and two burst tasks with a 10 ms gap;
    # process 12 ran one burst task.
    def task(pid: int, start: float, end: float, statements: int) -> str:
        return json.dumps(
            {
                "pid": pid,
                "start": start,
                "end": end,
                "statements": statements,
                "db_s": 0.002 * statements,
                "checkouts": 3,
                "commits": 2,
                "by_kind": {"UPDATE": 2, "SELECT": statements - 2},
            }
        )

    (tmp_path / "11.jsonl").write_text(
        "\n".join([task(11, 90.0, 90.5, 99), task(11, 100.0, 100.02, 7), task(11, 100.03, 100.05, 7)]) + "\n"
    )
    (tmp_path / "12.jsonl").write_text(task(12, 100.0, 100.04, 4) + "\n")
    (tmp_path / "burst.json").write_text(json.dumps({"committed_at": 100.0, "ids": [1, 2, 3]}))
    (tmp_path / "cpu.json").write_text(json.dumps(dict.fromkeys(CPU_GROUPS, 0.03)))
    probe = Probe.read(2, tmp_path, seconds=0.05)
    assert (probe.tasks, probe.statements, probe.checkouts, probe.commits) == (3, 6.0, 3.0, 2.0)
    assert round(probe.db_ms, 6) == 12.0 and round(probe.task_ms, 6) == round(80 / 3, 6)
    assert round(probe.gap_ms, 6) == 10.0  # only between tasks of one process
    assert round(probe.busy, 6) == 0.8  # 80 ms inside tasks of 2 x 50 ms
    assert probe.kinds == "SELECT 4.0, UPDATE 2.0"
    assert probe.cpu_ms["worker children"] == 10.0
    assert "| 2 | 3 | 6.0 | 3.0 | 2.0 | 12.0 ms | 26.7 ms | 10.0 ms | 80 % | SELECT 4.0, UPDATE 2.0 |" in render_probes(
        [probe]
    )
