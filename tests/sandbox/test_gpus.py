"""``sandbox.gpus``: finding this machine's GPUs without nvidia-smi, the operator's setting, one run per GPU, and a
device node bound into the sandbox (a GPU's nodes are bound the same way; ``tests/app/test_code_gpu.py`` runs a
program on a real GPU where the machine has one)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from sandbox import Bind, Limits, run, server_runtime
from sandbox.gpus import Gpu, GpuProblem, detect, hold, parse_setting, try_hold
from tests.sandbox.support import TEST_LIMITS

NVIDIA_MAJOR = 195
INFORMATION = """\
Model: \t\t NVIDIA H200
IRQ:   \t\t 42
GPU UUID: \t GPU-{uuid}
Bus Location: \t 0000:{bus}.0
Device Minor: \t {minor}
"""


def driver_files(tmp_path: Path, minors: dict[int, str]) -> tuple[Path, Path]:
    """A /dev with ``/dev/nvidia<minor>`` character devices and the driver's /proc information files (root only:
    ``mknod``)."""
    dev, proc = tmp_path / "dev", tmp_path / "gpus"
    dev.mkdir()
    proc.mkdir()
    for minor, uuid in minors.items():
        try:
            os.mknod(dev / f"nvidia{minor}", stat.S_IFCHR | 0o666, os.makedev(NVIDIA_MAJOR, minor))
        except PermissionError:
            pytest.skip("making a device node needs root")
        (proc / f"0000:{minor:02x}:00.0").mkdir()
        (proc / f"0000:{minor:02x}:00.0" / "information").write_text(
            INFORMATION.format(uuid=uuid, bus=f"{minor:02x}:00", minor=minor)
        )
    (dev / "nvidiactl").write_text("")  # a plain file named like a device is no GPU
    return dev, proc


def test_gpus_are_found_from_their_device_nodes_and_named_by_the_drivers_uuid(tmp_path: Path) -> None:
    dev, proc = driver_files(tmp_path, {0: "aaaa-1", 1: "????-2", 3: "cccc-3"})
    found = detect("", dev=dev, proc=proc)
    assert found == (Gpu(0, "GPU-aaaa-1"), Gpu(1, None), Gpu(3, "GPU-cccc-3"))
    assert found[0].env() == {"CUDA_VISIBLE_DEVICES": "GPU-aaaa-1"}
    # A UUID the driver could not read: the index in PCI order, as CUDA counts them then.
    assert found[1].env() == {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert detect("3, 0", dev=dev, proc=proc) == (Gpu(3, "GPU-cccc-3"), Gpu(0, "GPU-aaaa-1"))
    assert detect("none", dev=dev, proc=proc) == ()


def test_the_operators_setting_is_checked_against_the_machine(tmp_path: Path) -> None:
    dev, proc = driver_files(tmp_path, {0: "aaaa-1"})
    with pytest.raises(GpuProblem, match=r"no GPU device .*nvidia2 on this machine \(PODIUM_GPU_DEVICES=0,2\)"):
        detect("0,2", dev=dev, proc=proc)
    with pytest.raises(GpuProblem, match="by their minor numbers"):
        parse_setting("gpu0")
    assert parse_setting("") is None and parse_setting(" NONE ") == ()


def test_a_machine_without_gpus_has_none() -> None:
    present = sorted(p.name for p in Path("/dev").glob("nvidia[0-9]*"))
    assert [gpu.node for gpu in detect()] == [f"/dev/{name}" for name in present]


HOLDER = """
import sys, time
from pathlib import Path
from sandbox.gpus import Gpu, hold
with hold([Gpu(0)], Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def test_one_run_per_gpu_across_the_processes_of_the_machine(tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    other = subprocess.Popen([sys.executable, "-c", HOLDER, str(locks)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        assert try_hold([Gpu(0)], locks) is None  # another process runs on GPU 0
        taken = try_hold([Gpu(0), Gpu(1)], locks)
        assert taken is not None and taken[0] == Gpu(1)
        os.close(taken[1])
        got: list[Gpu] = []
        waiter = threading.Thread(target=lambda: got.extend(_held_once([Gpu(0)], locks)))
        waiter.start()
        time.sleep(1.0)
        assert got == []  # still waiting for GPU 0
        other.kill()  # the holder dies: the kernel drops its lock
        waiter.join(10)
        assert got == [Gpu(0)]
    finally:
        other.kill()
        other.communicate()


def _held_once(gpus: list[Gpu], folder: Path) -> list[Gpu]:
    with hold(gpus, folder, wait=0.05) as gpu:
        return [gpu]


LOOK = """
    import os, stat, sys
    mode = os.stat("/dev/fuse").st_mode if os.path.exists("/dev/fuse") else 0
    print("char" if stat.S_ISCHR(mode) else "absent")
    limits = [line for line in open("/proc/self/limits") if line.startswith("Max address space")]
    print(limits[0].split()[3])
"""


@pytest.mark.skipif(
    shutil.which("bwrap") is None or not os.path.exists("/dev/fuse"), reason="needs bwrap and /dev/fuse"
)
def test_a_device_is_seen_in_the_sandbox_only_where_it_is_bound(tmp_path: Path) -> None:
    program = tmp_path / "program"
    program.mkdir()
    (program / "look.py").write_text(textwrap.dedent(LOOK))

    def look(devices: tuple[str, ...], limits: Limits) -> list[str]:
        logs = tmp_path / "logs"
        logs.mkdir(exist_ok=True)
        done = run(
            ["python3", "/app/program/look.py"],
            [Bind(program, "/app/program")],
            cwd="/app/program",
            logs=logs,
            limits=limits,
            runtime=server_runtime(),
            devices=devices,
        )
        assert done.ok, done.stderr
        return done.stdout.decode().split()

    assert look((), TEST_LIMITS) == ["absent", str(TEST_LIMITS.memory_bytes)]
    # A GPU's run: its nodes bound, and no cap on address space (its cgroup caps the memory it holds).
    assert look(("/dev/fuse",), Limits(**{**TEST_LIMITS.__dict__, "address_space": False})) == ["char", "unlimited"]
    with pytest.raises(ValueError, match="a node of /dev"):
        look(("/etc/passwd",), TEST_LIMITS)
