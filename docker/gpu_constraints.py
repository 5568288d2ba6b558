"""Write ``constraints-gpu.txt``: the pins of the packages that the GPU image installs and a CPU
installation lacks, so that the GPU image is as reproducible as the default one.

``constraints.txt`` comes from a CPU installation (``make lock``), where torch is the CPU build and
needs no CUDA libraries. The GPU image installs torch (same release) from PyPI, whose Linux wheel is
the CUDA build: it brings the CUDA libraries, triton and the ``nvidia-*`` wheels, which
``constraints.txt`` cannot name. This resolves what the GPU image installs (the dependencies, the
fast baselines, then the ``baselines`` extra: ``docker/requirements.py``) under ``constraints.txt``
for Linux x86_64 and Python 3.11, from PyPI alone (``pip install --dry-run --report``: pip reads the
wheels' metadata, installs nothing), and pins every package of the report that
``constraints.txt`` does not.

    python docker/gpu_constraints.py          # rewrites constraints-gpu.txt (after `make lock`)
    python docker/gpu_constraints.py --check  # exit 1 naming what the GPU image would install unpinned

Once that resolution finds every package pinned, the file records a fingerprint of what it was resolved
from (the GPU image's requirements, the pins of both files, the platform, the index). With every version
pinned, the resolution depends on nothing else (a release's metadata on PyPI does not change), so a
fingerprint that matches the current files says, without the network, that the check would pass again;
the tests compare it (tests/app/test_deployment.py) and fail when a change to the pins or the
requirements needs this script run again.

Written by hand: pip reports what it would install but has no "fail on an unpinned package" mode.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
GPU_CONSTRAINTS = ROOT / "constraints-gpu.txt"
REQUIREMENTS = ROOT / "docker" / "requirements.py"
#: The image's platform: CPython 3.11 on x86_64 with glibc 2.36 (python:3.11-slim), so every manylinux
#: tag up to 2.36, each named (pip does not widen a --platform it is given to the older tags).
GLIBC = [f"manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)]
LEGACY = ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
PLATFORM = ["--python-version", "3.11", "--implementation", "cp"]
PLATFORM += [option for tag in (*GLIBC, *LEGACY) for option in ("--platform", tag)]
#: PyPI: the index the image installs from.
INDEX = "https://pypi.org/simple"
#: pip settings of this machine that would add other sources than PyPI (wheels of another build).
SOURCES = ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_NO_INDEX", "PIP_CONSTRAINT")
HEADER = """\
# The packages the GPU image installs beyond constraints.txt (the CUDA build of torch's own
# dependencies: CUDA libraries, triton, the nvidia-* wheels), pinned; the Dockerfile installs with
# both files. docker/gpu_constraints.py writes this file from PyPI's metadata (after `make lock`).
"""
#: The header line with the fingerprint of what the file was resolved from.
RESOLVED = "# resolved from sha256:"


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """``name == version`` lines of a constraints file, by normalized name."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            found[normalized(name)] = version.strip()
    return found


def gpu_requirements() -> list[str]:
    """What the GPU image installs: what every image installs, then the ``baselines`` extra."""
    run = [sys.executable, str(REQUIREMENTS)]
    texts = [
        subprocess.run([*run, *args], capture_output=True, text=True, check=True).stdout
        for args in ([], ["--extras", "baselines-light"], ["--extras", "baselines"])
    ]
    return [line for text in texts for line in text.splitlines() if line.strip()]


def resolve(constraints: Iterable[Path]) -> dict[str, str]:
    """Every package (normalized name to version) that pip would install for the GPU image."""
    env = {key: value for key, value in os.environ.items() if key not in SOURCES}
    env["PIP_CONFIG_FILE"] = os.devnull  # no find-links or extra index from pip.conf either
    with tempfile.TemporaryDirectory() as tmp:
        requirements = Path(tmp, "requirements.txt")
        requirements.write_text("\n".join(gpu_requirements()) + "\n", encoding="utf-8")
        report = Path(tmp, "report.json")
        command = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--dry-run",
            "--ignore-installed",
            "--only-binary=:all:",
            *PLATFORM,
            "--index-url",
            INDEX,
            "--target",
            str(Path(tmp, "target")),
            "--report",
            str(report),
            "-r",
            str(requirements),
        ]
        for path in constraints:
            command += ["--constraint", str(path)]
        if os.environ.get("PIP_CERT"):
            command += ["--cert", os.environ["PIP_CERT"]]
        subprocess.run(command, env=env, check=True)
        installs = json.loads(report.read_text(encoding="utf-8"))["install"]
    return {normalized(item["metadata"]["name"]): item["metadata"]["version"] for item in installs}


def unpinned(installed: dict[str, str], *pinned: dict[str, str]) -> dict[str, str]:
    """The packages of ``installed`` that no constraints file in ``pinned`` names."""
    return {name: version for name, version in installed.items() if not any(name in p for p in pinned)}


def fingerprint(requirements: list[str], cpu: dict[str, str], gpu: dict[str, str]) -> str:
    """SHA-256 of everything the GPU image's resolution depends on: its requirements
    (``gpu_requirements()``), the pins of both files, the platform and the index."""
    parts = [*requirements, "", *PLATFORM, INDEX, ""]
    parts += [f"{name}=={version}" for name, version in sorted(cpu.items())] + [""]
    parts += [f"{name}=={version}" for name, version in sorted(gpu.items())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def recorded_fingerprint(path: Path = GPU_CONSTRAINTS) -> str | None:
    """The fingerprint the file says it was resolved from, or None."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(RESOLVED):
            return line.removeprefix(RESOLVED).strip()
    return None


def check() -> dict[str, str]:
    """Resolve the GPU image with both files (PyPI); the packages it would install unpinned."""
    cpu, gpu = pins(CONSTRAINTS), pins(GPU_CONSTRAINTS)
    return unpinned(resolve([CONSTRAINTS, GPU_CONSTRAINTS]), cpu, gpu)


def write(pinned: dict[str, str], resolved_from: str | None) -> None:
    stamp = f"{RESOLVED}{resolved_from}\n" if resolved_from else ""
    lines = [f"{name}=={version}" for name, version in sorted(pinned.items())]
    GPU_CONSTRAINTS.write_text(HEADER + stamp + "\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="check that every package is pinned, pinning nothing new (records the fingerprint when it passes)",
    )
    args = parser.parse_args(argv)
    if not args.check:
        added = unpinned(resolve([CONSTRAINTS]), pins(CONSTRAINTS))
        write(added, None)
        print(f"{GPU_CONSTRAINTS.name}: {len(added)} packages")
    # The check itself (again after writing: the fingerprint is recorded only for a resolution that passed).
    missing = check()
    for name, version in sorted(missing.items()):
        print(f"{name}=={version} is not pinned (python docker/gpu_constraints.py)", file=sys.stderr)
    if missing:
        return 1
    cpu, gpu = pins(CONSTRAINTS), pins(GPU_CONSTRAINTS)
    if recorded_fingerprint() != (current := fingerprint(gpu_requirements(), cpu, gpu)):
        write(gpu, current)
        print(f"{GPU_CONSTRAINTS.name}: every package pinned, fingerprint recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
