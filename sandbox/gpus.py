"""The NVIDIA GPUs of this machine, and one run at a time on each; pure (no application code, no framework).

``detect(setting)`` finds the GPUs without nvidia-smi or any library: each GPU is a character device
``/dev/nvidia<minor>``, and the driver's ``/proc/driver/nvidia/gpus/<bus>/information`` gives its minor
number and UUID. The operator's setting (``PODIUM_GPU_DEVICES``) overrides what is found: ``none``, or the
minor numbers to use (``0,2``). A run on a GPU sees that GPU's device node and the driver's shared nodes
(``/dev/nvidiactl``, ``/dev/nvidia-uvm``, ``/dev/nvidia-uvm-tools``, ``/dev/nvidia-modeset``, those that
exist), bound into its sandbox, and ``CUDA_VISIBLE_DEVICES`` naming it (by UUID where the driver gives one,
so that CUDA never counts the GPUs it cannot open).

``hold(gpus, folder)`` takes one GPU for one run: an exclusive ``flock`` on ``<folder>/podium-gpu-<minor>.lock``,
so that every worker process of this machine (Celery's pool children, several workers) runs one program per
GPU. The kernel drops the lock when its holder dies, so a killed worker leaves no GPU taken.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The driver's nodes that every GPU's user needs besides its own ``/dev/nvidia<minor>``.
SHARED_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset")
DEV = Path("/dev")
PROC_GPUS = Path("/proc/driver/nvidia/gpus")
#: How often a run that waits for a GPU of this machine (all are taken) tries again.
WAIT_SECONDS = 0.5
_NODE = re.compile(r"nvidia(\d+)")


class GpuProblem(ValueError):
    """The operator's setting names no usable GPU; the message says which and why."""


@dataclass(frozen=True)
class Gpu:
    """One GPU: its minor number (``/dev/nvidia<minor>``) and, where the driver says, its UUID."""

    minor: int
    uuid: str | None = None

    @property
    def node(self) -> str:
        return f"/dev/nvidia{self.minor}"

    def nodes(self) -> tuple[str, ...]:
        """The device nodes a program on this GPU needs (its own first), those that exist here."""
        return (self.node, *(node for node in SHARED_NODES if os.path.exists(node)))

    def env(self) -> dict[str, str]:
        """What tells CUDA (and libraries that follow it) which GPU is the program's."""
        if self.uuid:
            return {"CUDA_VISIBLE_DEVICES": self.uuid}
        # Without a UUID, the index in PCI order, which is the order of the minor numbers.
        return {"CUDA_VISIBLE_DEVICES": str(self.minor), "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}

    def describe(self) -> str:
        return f"GPU {self.minor}"


def _uuids(proc: Path) -> dict[int, str]:
    """Minor number to UUID, from the driver's information files (empty where there are none)."""
    found: dict[int, str] = {}
    with contextlib.suppress(OSError):
        for folder in sorted(proc.iterdir()):
            fields: dict[str, str] = {}
            with contextlib.suppress(OSError):
                for line in (folder / "information").read_text(errors="replace").splitlines():
                    key, _, value = line.partition(":")
                    fields[key.strip()] = value.strip()
            minor, uuid = fields.get("Device Minor", ""), fields.get("GPU UUID", "")
            if minor.isdigit() and uuid.startswith("GPU-") and "?" not in uuid:
                found[int(minor)] = uuid
    return found


def _is_device(path: Path) -> bool:
    try:
        return stat.S_ISCHR(path.stat().st_mode)
    except OSError:
        return False


def _minors(dev: Path) -> list[int]:
    with contextlib.suppress(OSError):
        return sorted(int(m.group(1)) for p in dev.iterdir() if (m := _NODE.fullmatch(p.name)) and _is_device(p))
    return []


def parse_setting(setting: str) -> tuple[int, ...] | None:
    """The minor numbers the setting names; None for an empty setting (detect them), () for ``none``."""
    text = setting.strip().lower()
    if not text:
        return None
    if text == "none":
        return ()
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise GpuProblem(f"name GPUs by their minor numbers (0,1: /dev/nvidia0, /dev/nvidia1) or none, not {setting!r}")
    return tuple(dict.fromkeys(int(part) for part in parts))


def detect(setting: str = "", *, dev: Path = DEV, proc: Path = PROC_GPUS) -> tuple[Gpu, ...]:
    """This machine's GPUs that runs may use: those the setting names (each must exist), else every
    ``/dev/nvidia<minor>``. Raises ``GpuProblem`` for a setting that names a missing one."""
    named = parse_setting(setting)
    present = _minors(dev)
    if named is None:
        named = tuple(present)
    missing = [minor for minor in named if minor not in present]
    if missing:
        raise GpuProblem(
            f"no GPU device {', '.join(f'{dev}/nvidia{minor}' for minor in missing)} on this machine "
            f"(PODIUM_GPU_DEVICES={setting})"
        )
    uuids = _uuids(proc)
    return tuple(Gpu(minor, uuids.get(minor)) for minor in named)


def _lock_path(folder: Path, gpu: Gpu) -> Path:
    return folder / f"podium-gpu-{gpu.minor}.lock"


def try_hold(gpus: Sequence[Gpu], folder: Path) -> tuple[Gpu, int] | None:
    """Take the first free GPU (its lock file's descriptor, to close when the run ends), or None if all are taken."""
    folder.mkdir(parents=True, exist_ok=True)
    for gpu in gpus:
        fd = os.open(_lock_path(folder, gpu), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return gpu, fd
    return None


@contextlib.contextmanager
def hold(gpus: Sequence[Gpu], folder: Path, *, wait: float = WAIT_SECONDS) -> Iterator[Gpu]:
    """One GPU of ``gpus`` for the body alone, waiting while every one is taken by another run of this machine."""
    if not gpus:
        raise ValueError("hold needs at least one GPU")
    while (taken := try_hold(gpus, folder)) is None:
        time.sleep(wait)
    gpu, fd = taken
    try:
        yield gpu
    finally:
        os.close(fd)  # closing the descriptor releases the lock
