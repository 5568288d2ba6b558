"""The image's entry point: checks that would otherwise fail late or quietly, then the command.

* The web tier (``podium serve``) without ``PODIUM_SECRET_KEY`` would sign session cookies with a
  random key (every restart, and every second web container, logs everybody out): it stops here
  instead, unless ``PODIUM_THROWAWAY=1`` says that the instance is a throwaway one.
* A data folder (``/srv/podium/var``: the embedded default's SQLite file, matplotlib's cache) that
  the container's user cannot write, mostly a folder of the host mounted there, would end in
  "unable to open database file": it stops here and says which ``chown`` fixes it.
* A worker (``podium worker``) tries the sandbox of scoring programs once, with the limits a run gets
  (bubblewrap, its seccomp filter, a cgroup of the run's own), and says in one line on stderr whether
  programs can run here and, if not, why and which setting changes it; it starts either way (Python
  scorers and the hosted baselines need no sandbox), so that a container without what bubblewrap needs
  says so at start instead of failing each program run.

Each problem is one line on stderr and exit status 2; otherwise the command replaces this process
(``exec``: it stays process 1 and gets the signals). Standard library only (a worker's check imports the
sandbox library), and quick: it runs before every container's command.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

DEFAULT_DATA = "/srv/podium/var"
DATA = Path(os.environ.get("PODIUM_DATA_DIR", DEFAULT_DATA))
THROWAWAY = "PODIUM_THROWAWAY"


def subcommand(argv: list[str]) -> str | None:
    """The podium command ``argv`` runs (``serve`` for ``podium serve`` or ``python -m app.cli serve``)."""
    words = [Path(arg).name for arg in argv]
    for n, word in enumerate(words[:-1]):
        if word in ("podium", "app.cli"):
            return words[n + 1]
    return None


def serves(argv: list[str]) -> bool:
    """Whether ``argv`` starts the web tier."""
    return subcommand(argv) == "serve"


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def sandbox_report(environ: dict[str, str] | os._Environ[str]) -> str:
    """One line: whether scoring programs can run in this container, and if not why and what changes it."""
    if environ.get("PODIUM_PROGRAM_SANDBOX") == "none":
        return "sandbox: PODIUM_PROGRAM_SANDBOX=none: scoring programs run without bubblewrap, unprotected"
    from sandbox import Limits, SandboxUnavailable, run
    from sandbox.cgroups import CgroupUnavailable, create

    allow = _true(environ.get("PODIUM_SANDBOX_ALLOW_NO_CGROUP"))
    try:
        create(Limits()).remove()
        group = "a cgroup of its own for each run"
    except CgroupUnavailable as exc:
        if not allow:
            return (
                f"sandbox: scoring programs cannot run on this worker: {exc}; give the worker a delegated "
                "cgroup v2 subtree (docker/README.md) or set PODIUM_SANDBOX_ALLOW_NO_CGROUP=true to limit "
                "memory and processes per process only"
            )
        group = f"PODIUM_SANDBOX_ALLOW_NO_CGROUP=true: memory and processes limited per process only, as {exc}"
    with tempfile.TemporaryDirectory() as logs:
        try:
            done = run(
                ["/bin/true"], [], cwd="/", logs=Path(logs), limits=Limits(wall_seconds=30, require_cgroup=False)
            )
        except SandboxUnavailable as exc:
            return (
                f"sandbox: scoring programs cannot run on this worker: {exc} (in a container: the worker "
                "services' security_opt of compose.yaml, docker/README.md)"
            )
    if not done.ok:
        return f"sandbox: scoring programs cannot run on this worker: an empty sandbox failed ({done.describe()})"
    return f"sandbox: ready (bubblewrap; {group})"


def problem(argv: list[str], environ: dict[str, str] | os._Environ[str], data: Path = DATA) -> str | None:
    """What keeps ``argv`` from starting in this container, in one line; ``None`` when nothing does."""
    if serves(argv) and not environ.get("PODIUM_SECRET_KEY") and environ.get(THROWAWAY) != "1":
        return (
            "PODIUM_SECRET_KEY is not set: the web tier needs it to sign session cookies "
            "(e.g. -e PODIUM_SECRET_KEY=$(openssl rand -hex 32), or PODIUM_SECRET_KEY in .env for compose); "
            f"{THROWAWAY}=1 starts a throwaway instance with a random key instead"
        )
    if data.is_dir() and not os.access(data, os.W_OK | os.X_OK):
        uid = os.getuid()
        return (
            f"the data folder {data} is not writable by uid {uid}: "
            f"chown -R {uid} <the host folder mounted there>, or mount a named volume instead"
        )
    return None


def main(argv: list[str]) -> int:
    if not argv:
        print("entrypoint.py: no command to run", file=sys.stderr)
        return 2
    found = problem(argv, os.environ)
    if found:
        print(found, file=sys.stderr)
        return 2
    if subcommand(argv) == "worker" and "--ping" not in argv:
        print(sandbox_report(os.environ), file=sys.stderr, flush=True)
    os.execvp(argv[0], argv)  # noqa: S606 (the container's own command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
