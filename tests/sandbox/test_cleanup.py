"""A run's folder is removed after the run, and by a later run when its process was killed before it could."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.cleanup import LOCK, UNLOCKED_GRACE_SECONDS, run_folder, sweep

ROOT = Path(__file__).resolve().parents[2]

#: A process that makes a run folder in the given scratch folder, says which, and waits inside the run.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from sandbox.cleanup import run_folder
    with run_folder("podium-code-", Path(sys.argv[1])) as folder:
        (folder / "input").mkdir()
        (folder / "input" / "gold.txt").write_text("unpacked inputs")
        print(folder, flush=True)
        time.sleep(600)
    """
)


@contextlib.contextmanager
def holder(scratch: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A process inside a run (its folder made and held), killed at the end if it still runs."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(scratch)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        try:
            yield process, Path(process.stdout.readline().strip())
        finally:
            process.kill()


def test_the_folder_is_removed_after_the_run_even_when_the_run_fails(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), run_folder("podium-code-", tmp_path) as folder:
        (folder / "output").mkdir()
        (folder / "output" / "x").write_text("left by the program")
        (folder / "output").chmod(0)
        raise RuntimeError("the run failed")
    assert list(tmp_path.iterdir()) == []


def test_a_killed_runs_folder_goes_with_the_next_run_and_a_live_runs_stays(tmp_path: Path) -> None:
    with holder(tmp_path) as (killed, killed_folder), holder(tmp_path) as (_, live_folder):
        assert (killed_folder / "input" / "gold.txt").is_file() and live_folder.is_dir()
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert killed_folder.is_dir()  # nothing ran to remove it
        with run_folder("podium-code-", tmp_path) as mine:
            assert not killed_folder.exists()
            assert live_folder.is_dir() and (live_folder / LOCK).is_file()
            assert sorted(tmp_path.iterdir()) == sorted([live_folder, mine])
        assert sorted(tmp_path.iterdir()) == [live_folder]


def test_another_prefix_and_other_files_are_left_alone(tmp_path: Path) -> None:
    with holder(tmp_path) as (killed, killed_folder):
        killed.kill()
        killed.wait()
    (tmp_path / "podium-code-not-a-folder").write_text("a file")
    assert sweep(tmp_path, "podium-program-") == []
    assert sweep(tmp_path, "podium-code-") == [killed_folder]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["podium-code-not-a-folder"]


def test_a_folder_without_its_lock_is_being_made_unless_it_is_old(tmp_path: Path) -> None:
    young, old = tmp_path / "podium-code-young", tmp_path / "podium-code-old"
    young.mkdir()
    old.mkdir()
    then = time.time() - UNLOCKED_GRACE_SECONDS - 60
    os.utime(old, (then, then))
    assert sweep(tmp_path, "podium-code-") == [old]
    assert young.is_dir() and not old.exists()
