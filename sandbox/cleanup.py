"""A run's folders: made for the run, removed after it whatever the program left in them, and removed by a later
run when the process that made them was killed before it could."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The file in a run's folder that its process holds locked (``flock``) while the folder is in use. The kernel
#: drops the lock when the process dies, however it dies: a folder whose lock can be taken is a killed run's.
LOCK = ".podium-in-use"
#: A folder with no lock file yet is being made, unless it is older than this (its maker died in between).
UNLOCKED_GRACE_SECONDS = 600.0


def remove_tree(root: Path) -> None:
    """Remove ``root`` and everything in it, taking back folders the program made unreadable (the runner's
    user owns them, so it may)."""

    def retry(function: Any, path: str, _info: Any) -> None:
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        function(path)

    shutil.rmtree(root, onerror=retry)


@contextlib.contextmanager
def run_folder(prefix: str, scratch: Path | None = None) -> Iterator[Path]:
    """A new folder named ``prefix...`` in ``scratch`` (the system's temporary folder by default), held for the
    run and removed after it. The folders of earlier runs with the same prefix that nobody holds (their process
    was killed, a worker by SIGKILL or the machine's OOM killer) are removed first, so that disk does not fill
    with the unpacked inputs of killed runs. The lock works across processes, containers and PID namespaces that
    share the folder."""
    parent = scratch if scratch is not None else Path(tempfile.gettempdir())
    sweep(parent, prefix)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    held = os.open(folder / LOCK, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield folder
    finally:
        try:
            remove_tree(folder)
        finally:
            os.close(held)  # after the removal: a sweep never sees the folder unheld while it is still in use


def sweep(parent: Path, prefix: str) -> list[Path]:
    """Remove the folders ``prefix...`` in ``parent`` that no process holds; return them."""
    removed: list[Path] = []
    try:
        names = [name for name in os.listdir(parent) if name.startswith(prefix)]
    except OSError:
        return removed
    for name in names:
        folder = parent / name
        try:
            lock = os.open(folder / LOCK, os.O_WRONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            # Being made (mkdtemp, then the lock), or its maker died in between: only the latter when it is old.
            with contextlib.suppress(OSError):
                if folder.is_dir() and time.time() - folder.stat().st_mtime > UNLOCKED_GRACE_SECONDS:
                    remove_tree(folder)
                    removed.append(folder)
            continue
        except OSError:  # not a folder of ours, or not ours to open
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: in use
            os.close(lock)
            continue
        try:
            remove_tree(folder)
            removed.append(folder)
        except OSError:  # its own process removed it just now, as it finished; or it is not ours to remove
            pass
        finally:
            os.close(lock)
    return removed
