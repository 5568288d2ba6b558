"""The image's HEALTHCHECK: a probe that fits the role the container runs.

* ``podium serve``: ``GET /healthz`` on the port it listens on (the process answers; it does not
  touch the database, so a database outage does not restart every web container at once);
* ``podium worker``: ``podium worker --ping`` (a worker of this container answers a Celery ping); not
  ``podium worker --remote`` (a competition's own worker: no broker to ping);
* anything else (``podium db upgrade``, a shell): nothing to probe, healthy.

The role is read from the command lines in ``/proc`` (the lowest process id that runs ``podium``),
so one image and one HEALTHCHECK serve every service of compose.yaml. Standard library only.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterable
from pathlib import Path

TIMEOUT = 4.0


def option(argv: list[str], name: str, default: str) -> str:
    """The value of ``--name VALUE`` or ``--name=VALUE`` in ``argv``."""
    for n, arg in enumerate(argv):
        if arg == name and n + 1 < len(argv):
            return argv[n + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def probe_for(argv: list[str]) -> list[str] | str | None:
    """What to check for a process running ``argv``: a URL (serve), a command (worker), or ``None``
    when ``argv`` is not a long-running Podium tier."""
    words = [Path(arg).name for arg in argv]
    if "podium" not in words and "app.cli" not in words:
        return None
    rest = words[max(words.index(w) for w in ("podium", "app.cli") if w in words) + 1 :]
    if rest[:1] == ["serve"]:
        host = option(argv, "--host", "127.0.0.1")
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 (the address it listens on)
        return f"http://{host}:{option(argv, '--port', '8000')}/healthz"
    if rest[:1] == ["worker"] and any(arg == "--remote" or arg.startswith("--remote=") for arg in argv):
        return None  # a competition's own worker has no broker to answer a ping; its last contact is on its page
    if rest[:1] == ["worker"] and "--ping" not in rest:
        return ["podium", "worker", "--ping"]
    return None


def command_lines(proc: Path = Path("/proc")) -> Iterable[list[str]]:
    """Every process's command line, lowest process id first."""
    pids = sorted(int(entry.name) for entry in proc.iterdir() if entry.name.isdigit())
    for pid in pids:
        try:
            raw = (proc / str(pid) / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if raw:
            yield [part.decode(errors="replace") for part in raw.rstrip(b"\0").split(b"\0")]


def check(proc: Path = Path("/proc")) -> int:
    """0 when the first Podium tier found in ``proc`` answers its probe (or none runs), else 1."""
    for argv in command_lines(proc):
        probe = probe_for(argv)
        if isinstance(probe, str):
            try:
                with urllib.request.urlopen(probe, timeout=TIMEOUT) as answer:  # noqa: S310 (a URL we built)
                    return 0 if answer.status == 200 else 1
            except OSError as exc:
                print(f"{probe}: {exc}", file=sys.stderr)
                return 1
        if probe is not None:
            return subprocess.run(probe, check=False).returncode
    return 0


if __name__ == "__main__":
    sys.exit(check())
