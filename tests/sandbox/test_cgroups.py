"""Limits for all of a run's processes together (its cgroup): memory, processes, and the group gone after."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox import Limits, cgroups
from tests.sandbox.support import run_script

MB = 1024 * 1024


@pytest.fixture
def groups(monkeypatch: pytest.MonkeyPatch) -> list[cgroups.RunGroup]:
    """The groups the runner makes (the real ``create``, its results kept to look at)."""
    made: list[cgroups.RunGroup] = []
    create = cgroups.create

    def keep(limits: Limits) -> cgroups.RunGroup:
        group = create(limits)
        made.append(group)
        return group

    monkeypatch.setattr(cgroups, "create", keep)
    return made


def test_children_together_over_the_memory_limit_stop_the_whole_run_at_the_first_kill(
    tmp_path: Path, groups: list
) -> None:
    """The kernel kills one child for the group's memory; the run has failed then, so the runner stops the rest at
    once (the other child and the parent waiting on it) instead of holding the worker until the time limit."""
    limit = 512 * MB
    run = run_script(
        tmp_path,
        """
        import json, os, time
        share = int(512 * 1024 * 1024 * 0.6)
        children = []
        for _ in range(2):
            pid = os.fork()
            if pid == 0:
                held = b"x" * share  # really written: every page is resident
                time.sleep(600)
                os._exit(0)
            children.append(pid)
        ended = [os.waitpid(pid, 0)[1] for pid in children]
        json.dump({"ended": ended}, open("/app/output/report.json", "w"))
        """,
        limits=Limits(wall_seconds=60, memory_bytes=limit, processes=64),
    )
    assert run.result.out_of_memory and not run.result.ok
    assert not run.result.timed_out  # the surviving child was not left to sleep until the time limit
    assert not (run.output / "report.json").exists()  # nor the parent to wait for it
    assert run.result.describe() == "it used more than 512 MB of memory (all its processes together) and was stopped"
    assert run.result.peak_memory_bytes is not None and 0.6 * limit < run.result.peak_memory_bytes <= limit
    assert len(groups) == 1 and groups[0].folders and not any(folder.exists() for folder in groups[0].folders)


def test_the_process_limit_holds_for_the_whole_run(tmp_path: Path, groups: list) -> None:
    run = run_script(
        tmp_path,
        """
        import json, os, time
        started = 0
        try:
            while started < 500:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                started += 1
        except OSError:
            pass
        json.dump({"started": started}, open("/app/output/report.json", "w"))
        """,
        limits=Limits(wall_seconds=20, memory_bytes=1024 * MB, processes=32),
    )
    assert run.result.ok, run.result.stderr
    assert run.report()["started"] < 32
    pids = next(folder for folder in groups[0].folders if "pids" in folder.parts or groups[0].version == 2)
    assert not pids.exists()


def test_a_quick_run_reports_its_peak_memory(tmp_path: Path, groups: list) -> None:
    run = run_script(tmp_path, "held = b'x' * (64 * 1024 * 1024)")
    assert run.result.ok and not run.result.out_of_memory
    assert run.result.peak_memory_bytes is not None and run.result.peak_memory_bytes >= 64 * MB
    assert not any(folder.exists() for folder in groups[0].folders)


def test_the_group_of_a_run_whose_runner_was_killed_is_removed_by_a_later_run() -> None:
    leftover = cgroups.create(Limits())  # a runner killed before it removed its group
    old = time.time() - cgroups.LEFTOVER_SECONDS - 60
    for folder in leftover.folders:
        os.utime(folder, (old, old))
    fresh = cgroups.create(Limits())  # one just made is kept, whatever its age
    later = cgroups.create(Limits())
    try:
        assert not any(folder.exists() for folder in leftover.folders)
        assert all(folder.exists() for folder in fresh.folders)
    finally:
        for group in (leftover, fresh, later):
            group.remove()


def test_a_group_that_vanishes_during_the_sweep_stops_neither_the_sweep_nor_its_listing(tmp_path: Path) -> None:
    """Another runner may remove its group between the listing and the stat: a dangling link stands for it (its stat
    fails as a vanished folder's does). Every old leftover is still removed, and the listing is closed (an unclosed
    one is a ResourceWarning, an error under this suite's settings)."""
    old = time.time() - cgroups.LEFTOVER_SECONDS - 60
    leftovers = []
    for n in range(20):
        folder = tmp_path / f"{cgroups.PREFIX}old-{n}"
        folder.mkdir()
        os.utime(folder, (old, old))
        leftovers.append(folder)
        (tmp_path / f"{cgroups.PREFIX}gone-{n}").symlink_to(tmp_path / f"vanished-{n}")
    cgroups._sweep(tmp_path)
    assert not any(folder.exists() for folder in leftovers)
