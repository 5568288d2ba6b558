"""Folders of the host shown in a sandbox without their host paths in its mount table.

A bind mount's line in ``/proc/self/mountinfo`` gives, as its fourth field, the source's path inside its own file
system: the kernel prints it for every bind, whatever the mount point, so a program that reads the table learns
where the runtime and the run's folders live on the host. A file system's own root is printed as ``/``. So the run
starts in a mount namespace of its own (``unshare``; when the runner is not root, in a user namespace of its own
too, where it may mount), and a setup step there mounts an overlay file system over each folder, from inside the
folder: its root is its own, and its options name the layers only as given, relative to the folder
(``lowerdir=.:/mnt``). Then bwrap starts in that namespace and binds the folders, that is the overlays, as before.
The sandbox's mount table shows overlays, and nothing of the host's layout.

A read-only folder is an overlay's lower layer, beside an empty one (an overlay without an upper layer needs two):
a tiny memory-backed file system the step mounts at ``/mnt`` in the run's namespace alone (so nothing the sandbox
shows may come from there: then no folder is shown as an overlay). A writable folder is an overlay's upper layer;
the kernel wants a work folder on the same file system, an empty sibling on the host (``work_folder``), made before
the run and removed after it (``prepare``, ``clean``). What the program writes lands in the folder itself, as with a
bind. Where the kernel refuses an overlay (a writable folder on a file system that cannot be an upper layer, such as
another overlay) the folder is bound as it is: the run is the same, and that folder's path shows as before.

When the runner is not root, bwrap runs as root of the run's user namespace, and is told the runner's user and
group ids (``--uid``, ``--gid``), so that the program runs as the runner's user as before. Where this machine does
not let the runner make such namespaces (``usable``), or the ``unshare`` and ``mount`` commands are missing, the
folders are bound as they are. Files (not folders) are bound as they are too: an overlay's layers are folders.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

UNSHARE = "/usr/bin/unshare"
SETPRIV = "/usr/bin/setpriv"
MOUNT = "/usr/bin/mount"
#: Where the empty lower layer is mounted, in the run's mount namespace alone.
EMPTY = "/mnt"
#: The setup step (POSIX shell): the empty layer, then per folder (kind, folder, work folder's name) an overlay
#: over it, mounted from inside it; then the rest of the command (bwrap), in this namespace.
SETUP = f"""set -e
mount -n -t tmpfs -o size=4k,mode=0555 podium {EMPTY}
while [ "$1" != -- ]; do
    kind=$1 folder=$2 work=$3
    shift 3
    cd "$folder"
    options="lowerdir={EMPTY},upperdir=.,workdir=../$work"
    [ "$kind" = rw ] || options="ro,lowerdir=.:{EMPTY}"
    mount -n -t overlay podium -o "$options" "$folder" 2>/dev/null || true
done
shift
cd /
exec "$@"
"""


def work_folder(source: Path, index: int) -> Path:
    """The overlay's work folder for the ``index``-th writable folder ``source``: an empty sibling (same mount)."""
    return source.parent / f".podium-work-{index}"


@functools.cache
def usable(root: bool) -> bool:
    """Whether this process can start a run in a mount namespace (and, not ``root``, a user namespace) of its own,
    and mount there (a kernel or a security module may allow the namespace and refuse the mount)."""
    if not (all(os.access(path, os.X_OK) for path in (UNSHARE, MOUNT, SETPRIV)) and os.path.isdir(EMPTY)):
        return False
    argv = [UNSHARE, "-m", "--propagation", "private", MOUNT, "-n", "-t", "tmpfs", "-o", "size=4k", "podium", EMPTY]
    if not root:
        argv[1:1] = ["-U", "-r"]
    try:
        return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _folder(source: str) -> bool:
    return os.path.isdir(source) and not os.path.islink(source)


def prefix(mounts: Sequence[tuple[str, str, str]], *, root: bool) -> list[str]:
    """The command that starts a run whose ``mounts`` (bwrap option, source, target) show as overlays: the setup
    step, which ends by running what follows it. Empty where the folders are bound as they are."""
    folders = [(option, source) for option, source, _ in mounts if option in ("--ro-bind", "--bind")]
    triples: list[str] = []
    writable = 0  # the writable folders are counted as ``prepare`` counts them
    for option, source in folders:
        writable += option == "--bind"
        if _folder(source):
            name = work_folder(Path(source), writable - 1).name
            triples += ["ro" if option == "--ro-bind" else "rw", os.path.realpath(source), name]
    below = any(source == EMPTY or source.startswith(EMPTY + "/") for _, source in folders)
    if not triples or below or not usable(root):
        return []
    users = [] if root else ["-U", "-r"]
    # Killed with the runner, as bwrap is (--die-with-parent) once it starts: a runner that dies during the setup
    # step would otherwise leave bwrap to start without a parent.
    namespaces = [UNSHARE, *users, "-m", "--propagation", "private", "--"]
    return [SETPRIV, "--pdeathsig", "KILL", "--", *namespaces, "/bin/sh", "-c", SETUP, "sh", *triples, "--"]


def prepare(sources: Sequence[Path]) -> None:
    """Make the work folders of the writable folders ``sources``, in the order of their binds (before the run)."""
    clean(sources)
    for index, source in enumerate(sources):
        if _folder(str(source)):
            work_folder(source, index).mkdir(mode=0o700)


def clean(sources: Sequence[Path]) -> None:
    """Remove the work folders of ``sources``. The kernel leaves a folder of its own in each, without any permission:
    a runner that is not root gives it back its owner's before removing it."""
    for index, source in enumerate(sources):
        work = work_folder(source, index)
        for top, folders, _ in os.walk(work):
            for name in folders:
                with contextlib.suppress(OSError):
                    os.chmod(os.path.join(top, name), 0o700)
        shutil.rmtree(work, ignore_errors=True)
