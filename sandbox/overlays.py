"""Folders of the host shown in a sandbox without their host paths in its mount table (a root runner's way).

A bind mount's line in ``/proc/self/mountinfo`` gives, as its fourth field, the source's path inside its own file
system: the kernel prints it for every bind, whatever the mount point, so a program that reads the table learns
where the runtime and the run's folders live on the host. A file system's own root is printed as ``/``. So when
the runner is root, bwrap binds each such folder at a staging point of the sandbox's own (``/tmp/.podium/N``), and
a setup step inside the sandbox, after bwrap and before ``setpriv`` drops to the run's user, mounts an overlay file
system at the folder's real target from inside the staging point: its root is its own, and its options name the
layers only as given, relative to the staging point (``lowerdir=.:/app/input``). Then the staging binds are
detached (the overlays keep what they need of them) and their folders removed, so the table shows overlays alone
and ``/tmp`` is empty again. The setup step reads what to mount from a variable of its environment (``VARIABLE``),
so that the command line of the sandbox's first process, which the program can read, holds no folder's name.

A read-only folder is an overlay's lower layer, beside the empty folder under its mount point (an overlay without
an upper layer needs two layers; the second is the mount point's own folder, which bwrap made empty and the overlay
then covers). A writable folder is its upper layer; the kernel wants a work folder on the same mount, so its parent
is what is staged (the program never sees it: only the overlay stays), with an empty work folder beside it on the
host (``work_folder``, made before the run and removed after it: ``prepare``, ``clean``). What the program writes
lands in the folder itself, as with a bind. Where the kernel refuses an overlay (a writable folder on a file system
that cannot be an upper layer, such as another overlay) the folder is bound at its target instead: the run is the
same, and that folder's path shows as before.

Mounting needs the privilege a root runner's sandbox holds until ``setpriv`` (``sandbox.bwrap``). When the runner
is not root, bwrap gives the program a user namespace nested in the sandbox's, which does not own the sandbox's
mounts, so no capability kept for it could mount there (and util-linux's mount refuses any user but root): its
binds stay plain binds. Files (not folders) bound
alone stay plain binds too, since an overlay's layers are folders, and so do all binds when one target is inside
another (an overlay on the outer target would cover a bind made before it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: Where the staging binds are: in the sandbox's own /tmp, whose folders the setup step removes.
STAGE = "/tmp/.podium"  # noqa: S108 (the sandbox's own /tmp, not the host's)
MOUNT = "/usr/bin/mount"
#: The variable that hands the setup step its list, one line per folder: the folder, its target, the overlay's
#: options and how to bind it instead (tab-separated). bwrap reads it with its other options from a memory file,
#: and the step removes it before the program starts.
VARIABLE = "PODIUM_OVERLAYS"
#: The setup step (dash): an overlay per line; then the staging binds detached; then the program's working folder
#: (inside an overlay, so only now reachable), and the rest of the command.
SETUP = f"""set -e
tab=$(printf '\\t')
while IFS=$tab read -r folder target options instead; do
    cd "$folder"
    if ! mount -n -t overlay podium -o "$options" "$target" 2>/dev/null; then
        if [ "$instead" = move ]; then mount -n --move "$folder" "$target"; else mount -n --bind . "$target"; fi
    fi
done <<END
${VARIABLE}
END
unset {VARIABLE}
cd /
umount -n -l {STAGE}/* 2>/dev/null || true
rmdir {STAGE}/* {STAGE}
cd "$1"
unset OLDPWD
shift
exec "$@"
"""


@dataclass(frozen=True)
class Staged:
    """The bwrap mounts with the folders staged, the overlay mount points bwrap must make, the setup step's
    environment (``VARIABLE``), and the command that goes before the program's (empty when nothing is staged)."""

    mounts: list[tuple[str, str, str]]
    targets: list[str]
    env: dict[str, str]
    setup: list[str]


def work_folder(source: Path, index: int) -> Path:
    """The overlay's work folder for the ``index``-th writable folder ``source``: an empty sibling (same mount)."""
    return source.parent / f".podium-work-{index}"


def _stageable(option: str, source: str, target: str) -> bool:
    return (
        option in ("--ro-bind", "--bind")
        and os.path.isdir(source)
        and not os.path.islink(source)
        and not any(c.isspace() for c in source + target)
        and (option == "--ro-bind" or os.path.dirname(source) != source)
    )


def available() -> bool:
    """Whether the host has the ``mount`` command the setup step runs (Debian's util-linux ``mount``)."""
    return os.access(MOUNT, os.X_OK)


def stage(mounts: Sequence[tuple[str, str, str]], *, cwd: str) -> Staged:
    """``mounts`` (bwrap option, source, target) with each folder staged for an overlay, and the setup step."""
    wanted = [target for _, _, target in mounts]
    if any(inner.startswith(outer.rstrip("/") + "/") for outer in wanted for inner in wanted):
        return Staged(list(mounts), [], {}, [])
    out: list[tuple[str, str, str]] = []
    targets: list[str] = []
    lines: list[str] = []
    writable = 0
    for option, source, target in mounts:
        index = writable
        writable += option == "--bind"  # the writable binds are counted as ``prepare`` counts them
        if not _stageable(option, source, target):
            out.append((option, source, target))
            continue
        point = f"{STAGE}/{len(targets)}"
        if option == "--bind":
            folder = Path(source)
            out.append((option, str(folder.parent), point))
            work = work_folder(folder, index).name
            lines.append(f"{point}/{folder.name}\t{target}\tlowerdir={target},upperdir=.,workdir=../{work}\tbind")
        else:
            out.append((option, source, point))
            lines.append(f"{point}\t{target}\tro,lowerdir=.:{target}\tmove")
        targets.append(target)
    if not targets:
        return Staged(out, [], {}, [])
    setup = ["/bin/sh", "-c", SETUP, "podium-setup", cwd]
    return Staged(out, targets, {VARIABLE: "\n".join(lines)}, setup)


def prepare(sources: Sequence[Path]) -> None:
    """Make the work folders of the writable folders ``sources``, in the order of their binds (as root, before)."""
    for index, source in enumerate(sources):
        work = work_folder(source, index)
        shutil.rmtree(work, ignore_errors=True)
        if source.is_dir() and not source.is_symlink():
            work.mkdir(mode=0o700)


def clean(sources: Sequence[Path]) -> None:
    """Remove the work folders of ``sources`` (the kernel leaves a folder of its own in each)."""
    for index, source in enumerate(sources):
        shutil.rmtree(work_folder(source, index), ignore_errors=True)
