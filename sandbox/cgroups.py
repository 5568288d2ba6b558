"""Limits for all of a run's processes together, with a control group (cgroup) of the run's own.

The rlimits ``prlimit`` sets hold per process: a program limited to 4 GB could take 6 GB with two
children. A cgroup holds for the whole run: the runner makes one per run, bwrap is started inside it
(a shell writes its own process id into the group, then becomes bwrap), so every process of the
sandbox is in it from its first instruction. The group caps memory (``memory.max`` / v1
``memory.limit_in_bytes``, swap included), processes and threads (``pids.max``) and, when the limits
ask for it, CPU (``cpu.max`` / v1 ``cpu.cfs_quota_us``). While the run goes the runner watches how many of its
processes the kernel killed for memory (``oom_kills``) and stops the whole run at the first; after it, the runner
reads the peak memory and that count, then removes the group.

Two layouts are understood, as ``/proc/self/mountinfo`` and ``/proc/self/cgroup`` describe them:

- **v2** (current systems): the unified hierarchy. Groups are made below the runner's own group, whose
  ``cgroup.subtree_control`` must offer ``memory`` and ``pids`` (a delegated subtree, e.g. systemd's
  ``Delegate=yes``). If the runner's group has no child yet and holds processes, the runner first moves
  itself into a leaf ``podium-runner`` of it, as the kernel allows controllers only for groups without
  processes of their own.
- **v1**: separate ``memory``, ``pids`` and ``cpu`` hierarchies; a group is made in each, below the
  runner's own group there (the runner must be root, or own those folders).

``create`` raises ``CgroupUnavailable`` saying why none can be made here.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.limits import Limits

#: Processes the sandbox itself adds to the program's: bwrap and the init of its PID namespace.
OWN_PROCESSES = 2
#: How long a group whose processes are still exiting may take to be removable.
REMOVE_WAIT_SECONDS = 5.0
#: Age past which an empty group of a run is a leftover (its runner was killed) that the next run removes.
LEFTOVER_SECONDS = 600
PREFIX = "podium-run-"
CPU_PERIOD_MICROSECONDS = 100_000


class CgroupUnavailable(RuntimeError):
    """No cgroup can be made for a run here; the message says why."""


@dataclass(frozen=True)
class RunGroup:
    """The cgroup of one run: one folder (v2), or one per controller (v1: memory, pids, cpu)."""

    version: int
    memory: Path
    folders: tuple[Path, ...]

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its id into to join the group (every hierarchy)."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def peak_memory(self) -> int | None:
        """The most memory the run's processes held together, in bytes (None where the kernel does not say)."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        with contextlib.suppress(OSError, ValueError):
            return int((self.memory / name).read_text().split()[0])
        return None

    def oom_kills(self) -> int:
        """How many of the run's processes the kernel killed for going over the memory limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError):
            for line in (self.memory / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self) -> bool:
        """Kill whatever is left in the group and remove it; False if it could not be removed in time."""
        deadline = time.monotonic() + REMOVE_WAIT_SECONDS
        for folder in self.folders:
            while True:
                if self.version == 2:
                    with contextlib.suppress(OSError):
                        (folder / "cgroup.kill").write_text("1")
                with contextlib.suppress(OSError, ValueError):
                    for pid in (folder / "cgroup.procs").read_text().split():
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(int(pid), signal.SIGKILL)
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        return False
                    time.sleep(0.01)
        return True


def _mounts() -> list[tuple[str, Path, set[str]]]:
    """The cgroup file systems: (type, mount point, super options) from the mount table."""
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            fields = line.split()
            tail = fields[fields.index("-") + 1 :]
            if tail[0] in ("cgroup", "cgroup2"):
                out.append((tail[0], Path(fields[4]), set(tail[2].split(","))))
    return out


def _own(hierarchy: str) -> str:
    """The runner's own group in a hierarchy ("" for v2, else a controller name) from /proc/self/cgroup."""
    with open("/proc/self/cgroup", encoding="utf-8") as groups:
        for line in groups:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if hierarchy in controllers.split(",") or controllers == hierarchy:
                return path.lstrip("/")
    return ""


def _below(mount: Path, own: str) -> Path:
    """The runner's own group folder under ``mount`` (the mount's root when the group is not seen there)."""
    folder = mount / own
    return folder if own and folder.is_dir() else mount


def _write(folder: Path, name: str, value: str) -> None:
    (folder / name).write_text(value)


def _sweep(parent: Path) -> None:
    """Remove the empty groups of runs whose runner was killed before it could (old enough not to be starting)."""
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            # Another runner may remove its group between the listing and the stat: skip it, sweep the rest.
            with contextlib.suppress(OSError):
                if entry.name.startswith(PREFIX) and time.time() - entry.stat().st_mtime > LEFTOVER_SECONDS:
                    os.rmdir(entry.path)  # refused while a process is in it


def _v2(mount: Path, limits: Limits, name: str) -> RunGroup:
    parent = _below(mount, _own(""))
    wanted = {"memory", "pids"} | ({"cpu"} if limits.cpus else set())
    offered = set((parent / "cgroup.controllers").read_text().split())
    if not wanted <= offered:
        raise CgroupUnavailable(
            f"the cgroup {parent} does not offer the {', '.join(sorted(wanted - offered))} controller"
        )
    enabled = set((parent / "cgroup.subtree_control").read_text().split())
    if not wanted <= enabled:
        try:
            _write(parent, "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted - enabled)))
        except OSError:  # processes of its own: the runner moves itself to a leaf first
            leaf = parent / "podium-runner"
            leaf.mkdir(exist_ok=True)
            _write(leaf, "cgroup.procs", str(os.getpid()))
            _write(parent, "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(wanted - enabled)))
    _sweep(parent)
    folder = parent / name
    folder.mkdir()
    group = RunGroup(2, folder, (folder,))
    try:
        _write(folder, "memory.max", str(limits.memory_bytes))
        if (folder / "memory.swap.max").exists():
            _write(folder, "memory.swap.max", "0")
        _write(folder, "pids.max", str(limits.processes + OWN_PROCESSES))
        if limits.cpus:
            _write(folder, "cpu.max", f"{int(limits.cpus * CPU_PERIOD_MICROSECONDS)} {CPU_PERIOD_MICROSECONDS}")
    except OSError:
        group.remove()
        raise
    return group


def _v1(mounts: dict[str, Path], limits: Limits, name: str) -> RunGroup:
    folders = {controller: _below(mount, _own(controller)) / name for controller, mount in mounts.items()}
    made: list[Path] = []
    try:
        for folder in folders.values():
            _sweep(folder.parent)
            folder.mkdir()
            made.append(folder)
        memory = folders["memory"]
        _write(memory, "memory.limit_in_bytes", str(limits.memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():  # swap counted too, where the kernel accounts it
            _write(memory, "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        _write(folders["pids"], "pids.max", str(limits.processes + OWN_PROCESSES))
        if limits.cpus and "cpu" in folders:
            _write(folders["cpu"], "cpu.cfs_period_us", str(CPU_PERIOD_MICROSECONDS))
            _write(folders["cpu"], "cpu.cfs_quota_us", str(int(limits.cpus * CPU_PERIOD_MICROSECONDS)))
    except OSError:
        RunGroup(1, folders["memory"], tuple(made)).remove()
        raise
    return RunGroup(1, folders["memory"], tuple(made))


def create(limits: Limits) -> RunGroup:
    """A fresh group for one run with ``limits`` written into it; raises ``CgroupUnavailable``."""
    name = f"{PREFIX}{secrets.token_hex(8)}"
    try:
        mounts = _mounts()
        v1: dict[str, Path] = {
            c: path
            for kind, path, options in mounts
            if kind == "cgroup"
            for c in ("memory", "pids", "cpu")
            if c in options
        }
        if "memory" in v1 and "pids" in v1:
            return _v1(v1, limits, name)
        unified = [path for kind, path, _ in mounts if kind == "cgroup2"]
        if unified:
            return _v2(unified[0], limits, name)
    except OSError as exc:
        raise CgroupUnavailable(
            f"a cgroup for the run cannot be made ({exc.strerror or exc}: {exc.filename})"
        ) from None
    raise CgroupUnavailable("no cgroup file system with the memory and pids controllers is mounted")
