"""What one sandboxed run may use: wall time, CPU, memory, processes and what it writes.

Each limit is enforced by the kernel where it can be (rlimits set inside the sandbox, per process; a
cgroup of the run's own for memory, processes and CPU of all its processes together, see
``sandbox.cgroups``; sized tmpfs for ``/tmp`` and ``/dev/shm``), and by the runner where it cannot (the
wall clock, and the total size of what the run wrote to its writable folders and its two logs, watched
while it runs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MIB = 1024 * 1024
GIB = 1024 * MIB


@dataclass(frozen=True)
class Limits:
    """Limits of one run. ``cpu_seconds`` None means: as many as ``wall_seconds`` (per process)."""

    #: Wall-clock time before the whole sandbox is killed.
    wall_seconds: float = 600.0
    #: CPU seconds per process (RLIMIT_CPU); the kernel sends SIGXCPU, then SIGKILL 5 s later.
    cpu_seconds: int | None = None
    #: Memory of all the run's processes together (their cgroup: the kernel kills a process beyond it), and
    #: address space per process (RLIMIT_AS: allocations beyond it fail, MemoryError in Python).
    memory_bytes: int = 4 * GIB
    #: Processes and threads the run may have at once (its cgroup's pids.max, and RLIMIT_NPROC).
    processes: int = 256
    #: CPUs' worth of time the run's processes may use together (cgroup CPU quota); None: no quota.
    cpus: float | None = None
    #: Refuse to run when no cgroup can be made for the run (the per-process rlimits alone would hold).
    require_cgroup: bool = True
    #: Total bytes in the writable folders plus stdout and stderr; one file may not exceed it either.
    output_bytes: int = 100 * MIB
    #: Files and folders the writable folders may hold (keeps watching them cheap).
    output_entries: int = 10_000
    #: Size of the private, memory-backed /tmp.
    tmp_bytes: int = 256 * MIB
    #: Size of the private, memory-backed /dev/shm (Python multiprocessing, joblib).
    shm_bytes: int = 64 * MIB
    #: How much of the end of stdout and of stderr is kept for people to read.
    log_tail_bytes: int = 64 * 1024
    #: Also cap each process's address space at ``memory_bytes`` (RLIMIT_AS). A run on a GPU turns it off: CUDA
    #: reserves far more address space than memory, and the run's cgroup still caps the memory it holds.
    address_space: bool = True

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "processes", "output_bytes", "output_entries", "tmp_bytes", "shm_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of at least 1, not {value!r}")
        if not self.wall_seconds > 0:
            raise ValueError(f"wall_seconds must be positive, not {self.wall_seconds!r}")
        if self.cpu_seconds is not None and self.cpu_seconds < 1:
            raise ValueError(f"cpu_seconds must be at least 1, not {self.cpu_seconds!r}")
        if self.cpus is not None and not self.cpus >= 0.01:
            raise ValueError(f"cpus must be at least 0.01, not {self.cpus!r}")

    @property
    def cpu(self) -> int:
        """The CPU seconds per process that are enforced."""
        return self.cpu_seconds if self.cpu_seconds is not None else max(1, int(self.wall_seconds + 0.999))

    def with_wall(self, seconds: float) -> Limits:
        return replace(self, wall_seconds=seconds)

    def prlimit_args(self) -> list[str]:
        """The ``prlimit`` options that set these limits; a program can lower them, never raise them."""
        return [
            *([f"--as={self.memory_bytes}"] if self.address_space else []),
            f"--cpu={self.cpu}:{self.cpu + 5}",
            f"--nproc={self.processes}",
            f"--fsize={self.output_bytes}",
            "--core=0",
        ]
