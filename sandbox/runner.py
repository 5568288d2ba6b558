"""Running one command in the sandbox and watching it: wall clock, output size, how it ended.

``run`` starts the command (see ``sandbox.bwrap`` for what the sandbox is), waits on a pidfd so that a quick
program costs no polling delay, and every ``WATCH_SECONDS`` adds up what the run wrote to its writable folders and
its two logs and looks whether the kernel killed one of its processes for its cgroup's memory. Past the wall time or
the output limit, or at that first kill for memory (the run has failed, and the rest of it would hold the worker
until it ends or times out), the whole sandbox is killed (SIGKILL to its first process, whose PID namespace takes
every other process of the run with it), and the runner returns only once that process, and so every process of
its PID namespace, is gone. stdout and stderr go to files outside the sandbox, capped like any file the program
writes, and only their ends are kept.

``isolation="none"`` runs the command without bwrap, with the same limits that ``prlimit`` can set and
a clean environment, the bind targets in its arguments replaced by the host folders. It protects
nothing and exists for operators who choose it deliberately (``PODIUM_PROGRAM_SANDBOX=none``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox import cgroups, overlays
from sandbox.bwrap import BWRAP, PRLIMIT, Bind, command_line, hand_over, memory_file, overlay_setup, sandbox_uid
from sandbox.limits import MIB, Limits
from sandbox.output import over, tail
from sandbox.runtimes import Runtime, RuntimeProblem, check_readable
from sandbox.seccomp import SeccompUnavailable, filter_program

ISOLATIONS = ("bwrap", "none")
#: The shell that puts the run's first process into its cgroup (each ``cgroup.procs`` named) and then runs bwrap.
JOIN = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'
#: How often the output folders are measured while the program runs.
WATCH_SECONDS = 0.1
#: How long a killed sandbox may take to be gone before bwrap itself is killed.
KILL_WAIT_SECONDS = 30
#: What the bwrap process itself gets as environment: nothing of the server's.
BWRAP_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
SIGNAL_MEANINGS = {
    signal.SIGXCPU: "it used up its CPU time",
    signal.SIGXFSZ: "it wrote a file larger than the output limit",
    signal.SIGSEGV: "it crashed (segmentation fault)",
    signal.SIGABRT: "it aborted",
}


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here; the message says why and what an operator can do (people read it)."""


@dataclass(frozen=True)
class RunResult:
    """How a run ended and the ends of its logs."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    output_exceeded: bool
    wall_seconds: float
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    stderr_bytes: int
    limits: Limits
    #: The kernel killed a process of the run for going over the memory of all its processes together.
    out_of_memory: bool = False
    #: The most memory the run's processes held together (from its cgroup; None without one).
    peak_memory_bytes: int | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.output_exceeded and not self.out_of_memory

    def describe(self) -> str:
        """How the run ended, in a plain sentence (nothing of what it printed)."""
        if self.timed_out:
            return f"it ran longer than its time limit of {self.limits.wall_seconds:g} seconds and was stopped"
        if self.out_of_memory:
            megabytes = self.limits.memory_bytes // MIB
            return f"it used more than {megabytes} MB of memory (all its processes together) and was stopped"
        if self.output_exceeded:
            return f"it wrote more than its output limit of {self.limits.output_bytes} bytes and was stopped"
        if self.signal is not None:
            meaning = SIGNAL_MEANINGS.get(signal.Signals(self.signal), "") if self.signal in _SIGNALS else ""
            name = signal.Signals(self.signal).name if self.signal in _SIGNALS else str(self.signal)
            return f"it was ended by signal {name}" + (f" ({meaning})" if meaning else "")
        return f"it exited with status {self.exit_code}"


_SIGNALS = {int(s) for s in signal.Signals}
_probe_lock = threading.Lock()
_probed: set[bool] = set()


def _probe(root: bool) -> None:
    """Start one empty sandbox the way ``run`` will, once per process; raise ``SandboxUnavailable`` if it fails."""
    with _probe_lock:
        if root in _probed:
            return
        if shutil.which(BWRAP, path=BWRAP_ENV["PATH"]) is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed on this worker, so scoring programs cannot run; "
                "the operator installs the Debian package bubblewrap"
            )
        limits = Limits(wall_seconds=10, processes=64)
        argv = command_line(["/bin/true"], [], cwd="/", env={}, limits=limits, runtime=None, uid=sandbox_uid())
        try:
            done = subprocess.run(argv, env=BWRAP_ENV, capture_output=True, timeout=30, check=False, cwd="/")
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"bubblewrap cannot start a sandbox on this worker ({exc})") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            reason = said[-1] if said else f"exit status {done.returncode}"
            raise SandboxUnavailable(
                f"bubblewrap cannot start a sandbox on this worker: {reason}. Scoring programs do not run "
                "until the operator makes it work (run the worker as root, or allow unprivileged user "
                "namespaces) or deliberately sets PODIUM_PROGRAM_SANDBOX=none"
            )
        _probed.add(root)


def check_available(*, require_cgroup: bool) -> None:
    """Raise ``SandboxUnavailable`` naming what is missing where ``run`` could not run a program here: bubblewrap
    that starts a sandbox and, with ``require_cgroup``, a cgroup of the run's own (checked as a worker starts)."""
    _probe(os.geteuid() == 0)
    if require_cgroup:
        group = _group(Limits(wall_seconds=10, processes=64), required=True)
        if group is not None:
            group.remove()


def _translate(argv: Sequence[str], cwd: str, binds: Sequence[Bind]) -> tuple[list[str], str]:
    """For ``isolation="none"``: the bind targets in ``argv`` and ``cwd`` replaced by their host folders."""
    if not binds:
        return list(argv), cwd
    by_target = {bind.target.rstrip("/"): str(bind.source) for bind in binds}
    pattern = re.compile(
        "(" + "|".join(re.escape(t) for t in sorted(by_target, key=len, reverse=True)) + r")(?=/|$|[^\w.-])"
    )
    swap = [pattern.sub(lambda m: by_target[m.group(1)], arg) for arg in argv]
    return swap, pattern.sub(lambda m: by_target[m.group(1)], cwd)


def _seccomp_pipe() -> int:
    """A pipe holding the seccomp filter, for bwrap to read; its read end."""
    try:
        program = filter_program()
    except SeccompUnavailable as exc:
        raise SandboxUnavailable(f"the sandbox cannot filter system calls on this worker: {exc}") from None
    read, write = os.pipe()
    try:
        os.write(write, program)  # a few hundred bytes: the pipe's buffer holds them
    finally:
        os.close(write)
    return read


def _group(limits: Limits, *, required: bool) -> cgroups.RunGroup | None:
    """The run's cgroup; None where none can be made and none is ``required`` (else ``SandboxUnavailable``)."""
    try:
        return cgroups.create(limits)
    except cgroups.CgroupUnavailable as exc:
        if not required:
            return None
        raise SandboxUnavailable(
            f"{exc}, so the memory and processes of all of a program's processes together cannot be limited "
            "(the limits per process alone let a program with children take more); programs do not run until "
            "the operator gives the worker cgroups (root with cgroup v1's memory and pids, or a delegated "
            "cgroup v2 subtree) or deliberately sets PODIUM_SANDBOX_ALLOW_NO_CGROUP=true"
        ) from None


def _first_pid(info: int) -> int | None:
    """The sandbox's first process (the init of its PID namespace), as bwrap reports it on its info pipe."""
    data = b""
    try:
        while chunk := os.read(info, 4096):
            data += chunk
    finally:
        os.close(info)
    try:
        pid = json.loads(data or b"{}").get("child-pid")
    except ValueError:
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _kill(process: subprocess.Popen[bytes], sandbox_pid: int | None) -> None:
    """Kill the whole run. The namespace's init takes every process of the run with it when it dies, and bwrap
    (which waits for it) exits only after that; without bwrap, the process group is all we can reach."""
    if sandbox_pid is not None and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sandbox_pid, signal.SIGKILL)
            return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


def run(
    argv: Sequence[str],
    binds: Sequence[Bind],
    *,
    cwd: str,
    logs: Path,
    limits: Limits,
    runtime: Runtime | None = None,
    env: Mapping[str, str] | None = None,
    isolation: str = "bwrap",
    devices: Sequence[str] = (),
) -> RunResult:
    """Run ``argv`` in the sandbox with ``binds`` and ``devices`` (device nodes: a GPU's, ``sandbox.gpus``);
    ``logs`` is a host folder for stdout and stderr (never bound). Raises ``SandboxUnavailable`` when bubblewrap
    cannot run here; everything the program does is in the result."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, not {isolation!r}")
    environment = dict(env or {})
    view = runtime.view() if runtime is not None and isolation == "bwrap" else None
    if runtime is not None:
        environment.update(view.env if view else {})
        path = view.bin if view else str(runtime.bin)
        environment["PATH"] = f"{path}:{environment.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"
    info_read, info_write, seccomp_read = -1, -1, -1
    passed: list[int] = []
    if isolation == "bwrap":
        uid = sandbox_uid()
        _probe(uid is not None)
        if runtime is not None:
            try:
                check_readable(runtime, others=uid is not None)
            except RuntimeProblem as exc:
                raise SandboxUnavailable(str(exc)) from None
        hand_over(binds, uid)
        setup = overlay_setup(binds, runtime, uid)  # [] where the folders are bound as they are
        info_read, info_write = os.pipe()
        seccomp_read = _seccomp_pipe()
        files = {target: memory_file("file", data) for target, data in (view.files if view else {}).items()}
        passed = [info_write, seccomp_read, *files.values()]
        full = command_line(
            argv,
            binds,
            cwd=cwd,
            env=environment,
            limits=limits,
            runtime=runtime,
            uid=uid,
            info_fd=info_write,
            seccomp_fd=seccomp_read,
            file_fds=files,
            devices=devices,
            mapped=bool(setup),
        )
        # Options from a file: bwrap's command line, which the program can read, names no host path.
        options, program = full[1 : full.index("--")], full[full.index("--") :]
        passed.append(memory_file("args", b"".join(arg.encode() + b"\0" for arg in options)))
        command = [*setup, BWRAP, "--args", str(passed[-1]), *program]
        workdir, spawn_env = "/", BWRAP_ENV
    else:
        translated, workdir = _translate(argv, cwd, binds)
        command, spawn_env = [PRLIMIT, *limits.prlimit_args(), "--", *translated], environment
    group = _group(limits, required=isolation == "bwrap" and limits.require_cgroup)
    if group is not None:  # the run's first process joins its group, then becomes bwrap: all of it is inside
        command = ["/bin/sh", "-c", JOIN, "sh", str(len(group.procs_files)), *group.procs_files, *command]
    watched = [bind.source for bind in binds if bind.writable]
    out_path, err_path = logs / "stdout.log", logs / "stderr.log"
    started = time.monotonic()
    try:
        with out_path.open("wb") as out, err_path.open("wb") as err:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=spawn_env,
                cwd=workdir,
                start_new_session=True,
                close_fds=True,
                pass_fds=tuple(passed),
            )
    except BaseException:
        if group is not None:
            group.remove()
        raise
    finally:
        for fd in passed:
            os.close(fd)
    sandbox_pid = _first_pid(info_read) if info_read >= 0 else None
    timed_out = exceeded = False
    try:
        kills = group.oom_kills if group is not None else None
        timed_out, exceeded = _watch(process, sandbox_pid, started, limits, [*watched, out_path, err_path], kills)
    finally:
        if process.poll() is None:
            _kill(process, sandbox_pid)
        try:
            process.wait(timeout=KILL_WAIT_SECONDS)
        except subprocess.TimeoutExpired:  # the namespace did not go: take bwrap itself
            _kill(process, None)
            process.wait()
        peak, oom = (group.peak_memory(), group.oom_kills() > 0) if group is not None else (None, False)
        if group is not None:
            group.remove()
        overlays.clean(watched)
    elapsed = time.monotonic() - started
    exceeded = exceeded or over(limits, [*watched, out_path, err_path])
    stdout, out_size = tail(out_path, limits.log_tail_bytes)
    stderr, err_size = tail(err_path, limits.log_tail_bytes)
    code = process.returncode
    # bwrap reports a program killed by a signal as 128 + the signal, as a shell does.
    sig = -code if code < 0 else (code - 128 if code > 128 and code - 128 in _SIGNALS else None)
    return RunResult(
        exit_code=None if sig is not None else code,
        signal=sig,
        timed_out=timed_out,
        output_exceeded=exceeded,
        wall_seconds=elapsed,
        stdout=stdout,
        stderr=stderr,
        stdout_bytes=out_size,
        stderr_bytes=err_size,
        limits=limits,
        out_of_memory=oom,
        peak_memory_bytes=peak,
    )


def _watch(
    process: subprocess.Popen[bytes],
    sandbox_pid: int | None,
    started: float,
    limits: Limits,
    watched: Sequence[Path],
    oom_kills: Callable[[], int] | None = None,
) -> tuple[bool, bool]:
    """Wait for the process; (timed out, output exceeded) when it had to be killed. Killed too once ``oom_kills``
    (its cgroup's count, which the result reads afterwards) says the kernel killed one of its processes for memory."""
    pidfd = os.pidfd_open(process.pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        while True:
            remaining = started + limits.wall_seconds - time.monotonic()
            if remaining <= 0:
                _kill(process, sandbox_pid)
                return True, False
            if poller.poll(int(min(remaining, WATCH_SECONDS) * 1000) + 1):
                return False, False
            if over(limits, watched):
                _kill(process, sandbox_pid)
                return False, True
            if oom_kills is not None and oom_kills():
                _kill(process, sandbox_pid)
                return False, False
    finally:
        os.close(pidfd)
