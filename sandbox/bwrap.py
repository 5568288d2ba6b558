"""The bubblewrap command line of a sandbox, in the two ways this machine may allow it.

**As root** (the usual worker in a container): bwrap runs privileged and creates the mount, PID,
network, IPC and UTS namespaces without a user namespace; inside, ``setpriv`` drops to a user id of
the run's own (never a real account, never root), with every capability and the bounding set cleared,
before ``prlimit`` sets the limits. Because that user owns no other process, the process limit counts
this run alone, and files of the host stay protected by their permissions as well as by being unseen.

**As any other user**: bwrap makes an unprivileged user namespace (the kernel must allow them) and
forbids further ones inside; the program runs as the server's user id mapped into it, with no
capability. ``prlimit`` runs inside the namespace, so the process limit counts the sandbox's processes,
not the server's.

Both ways: a read-only ``/usr`` (and the ``/bin``, ``/lib``... links or folders), a few harmless files
of ``/etc``, a fresh ``/proc`` of the sandbox's own PID namespace and minimal ``/dev``, memory-backed
``/tmp`` and ``/dev/shm`` of a fixed size that hold nothing when the program starts, the runtime
read-only at ``/runtime``, the binds the caller names (at paths it chooses, never below those private
file systems), a clean environment, loopback as the only network, and the whole sandbox killed when the
runner or bwrap dies. No path of the host is in the sandbox's tree or its command lines: the runtime
and the binds are seen at neutral paths, and bwrap reads its options from a memory file (``--args``), so
the sandbox's first process, whose command line the program can read, names none. Nor is one in its mount
table (``/proc/self/mountinfo``), where the kernel shows a bind's source path: the folders bwrap binds are
overlays, mounted over them in the run's own mount namespace before bwrap starts (``sandbox.overlays``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox import overlays
from sandbox.limits import Limits
from sandbox.runtimes import RUNTIME, Runtime

BWRAP = "bwrap"
SETPRIV = "/usr/bin/setpriv"
PRLIMIT = "/usr/bin/prlimit"
#: Sandbox users are drawn from here when the runner is root: far above any real account's id.
SANDBOX_UID_BASE = 2_000_000
SANDBOX_UID_SPAN = 1_000_000
#: Top-level links or folders of a merged-/usr system that programs expect.
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: Files of /etc that programs read and that hold nothing about this server.
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/alternatives",
    "/etc/ssl/certs",
    "/etc/mime.types",
    "/etc/fonts",
)
#: Folders of the sandbox's own that no bind may go into.
PRIVATE = ("/tmp", "/dev", "/proc", RUNTIME)


@dataclass(frozen=True)
class Bind:
    """A host folder or file the program sees at ``target``; read-only unless ``writable``.

    When the runner is root the source is handed to the run's own user (``chown``), so give each run
    sources of its own (the runner's callers copy or unpack them per run).
    """

    source: Path
    target: str
    writable: bool = False

    def __post_init__(self) -> None:
        if not self.target.startswith("/") or ".." in self.target.split("/"):
            raise ValueError(f"a bind target must be an absolute path without '..', not {self.target!r}")
        if any(self.target == p or self.target.startswith(p + "/") for p in PRIVATE):
            raise ValueError(f"a bind target may not be in the sandbox's own {', '.join(PRIVATE)}: {self.target!r}")


def sandbox_uid() -> int | None:
    """A fresh user id for one run when the runner is root; None when it runs unprivileged."""
    if os.geteuid() != 0:
        return None
    return SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_SPAN)


Mounts = list[tuple[str, str, str]]


def _mounts(binds: Sequence[Bind], runtime: Runtime | None) -> tuple[Mounts, Mounts]:
    """The sandbox's binds as (bwrap option, source, target): the system's folders, then the runtime's and the
    caller's (those shown as overlays: ``overlay_setup``)."""
    system = [("--ro-bind", "/usr", "/usr")]
    for name in TOP_LEVEL:
        path = Path("/") / name
        if path.is_symlink():
            system.append(("--symlink", os.readlink(path), str(path)))
        elif path.is_dir():
            system.append(("--ro-bind", str(path), str(path)))
    system += [("--ro-bind-try", file, file) for file in ETC_FILES]
    hidden = runtime.view().mounts if runtime else []
    hidden += [("--bind" if b.writable else "--ro-bind", str(b.source), b.target) for b in binds]
    return system, hidden


def command_line(
    argv: Sequence[str],
    binds: Sequence[Bind],
    *,
    cwd: str,
    env: Mapping[str, str],
    limits: Limits,
    runtime: Runtime | None,
    uid: int | None,
    info_fd: int | None = None,
    seccomp_fd: int | None = None,
    file_fds: Mapping[str, int] | None = None,
    devices: Sequence[str] = (),
    mapped: bool = False,
) -> list[str]:
    """The whole command: bwrap with its namespaces and mounts, then (as root) setpriv, then prlimit, then ``argv``.

    With ``info_fd`` bwrap writes the sandbox's first process id there (JSON ``child-pid``) as it starts; from
    ``seccomp_fd`` it reads the filter of ``sandbox.seccomp``; from each of ``file_fds`` (target -> descriptor) the
    content of a read-only file it makes (the runtime's ``Runtime.view().files``). Each of ``devices`` (a device
    node of the host, a GPU's: ``sandbox.gpus``) is bound at the same path into the sandbox's own ``/dev``.
    ``mapped``: bwrap starts as root of a user namespace of the run's (``overlay_setup``, when ``uid`` is None),
    and gives the program the runner's own user and group ids.
    """
    args = [BWRAP, "--die-with-parent", "--new-session"]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if uid is None:
        args += ["--unshare-user", "--disable-userns"]
        args += ["--uid", str(os.getuid()), "--gid", str(os.getgid())] if mapped else []
    # First the private file systems, so that a bind below /tmp (a runtime made there) is not hidden by them.
    args += ["--proc", "/proc", "--dev", "/dev"]
    for node in devices:
        if not node.startswith("/dev/") or ".." in node.split("/"):
            raise ValueError(f"a device must be a node of /dev, not {node!r}")
        args += ["--dev-bind", node, node]
    args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    args += ["--perms", "1777", "--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm"]
    system, hidden = _mounts(binds, runtime)
    mounts = system + hidden
    files = dict(file_fds or {})
    # The folders on the way to a mount point would be root's alone if bwrap made them: make them readable.
    private = ("/tmp", "/dev/shm", "/proc", "/dev")
    targets = [target for _, _, target in mounts] + list(files)
    parents = {str(p) for target in targets for p in PurePosixPath(target).parents if str(p) != "/"}
    for parent in sorted(parents - set(private), key=lambda p: (p.count("/"), p)):
        args += ["--perms", "0755", "--dir", parent]
    for option, source, target in mounts:
        args += [option, source, target]
    for target, fd in files.items():
        args += ["--perms", "0444", "--ro-bind-data", str(fd), target]
    # The sandbox's own root (a tmpfs bwrap made, unbounded) is read-only: /tmp, /dev/shm and the writable binds
    # are the only places a program can write.
    args += ["--remount-ro", "/"]
    args += ["--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    args.append("--")
    if uid is not None:
        args += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        args += ["--inh-caps=-all", "--bounding-set=-all", "--"]
    return [*args, PRLIMIT, *limits.prlimit_args(), "--", *argv]


def hand_over(binds: Sequence[Bind], uid: int | None) -> None:
    """As root, give the bound folders to the run's user, so that it can read them and write the writable ones."""
    if uid is None:
        return
    for bind in binds:
        os.chown(bind.source, uid, uid, follow_symlinks=False)
        if bind.source.is_dir() and not bind.source.is_symlink():
            for folder, dirs, files in os.walk(bind.source):
                for name in dirs + files:
                    os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def overlay_setup(binds: Sequence[Bind], runtime: Runtime | None, uid: int | None) -> list[str]:
    """The command that starts the run with its folders shown as overlays (``sandbox.overlays``), to put before
    bwrap's, with the writable folders' work folders made; empty where they are bound as they are."""
    _, hidden = _mounts(binds, runtime)
    setup = overlays.prefix(hidden, root=uid is not None)
    if setup:
        overlays.prepare([bind.source for bind in binds if bind.writable])
    return setup


def memory_file(name: str, data: bytes) -> int:
    """A descriptor reading ``data`` from its start, for bwrap (a memory file: no pipe buffer to fill)."""
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
