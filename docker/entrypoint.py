"""The image's entry point: checks that would otherwise fail late or quietly, then the command.

* The web tier (``podium serve``) without ``PODIUM_SECRET_KEY`` would sign session cookies with a
  random key (every restart, and every second web container, logs everybody out): it stops here
  instead, unless ``PODIUM_THROWAWAY=1`` says that the instance is a throwaway one.
* A data folder (``/srv/podium/var``: the embedded default's SQLite file, matplotlib's cache) that
  the container's user cannot write, mostly a folder of the host mounted there, would end in
  "unable to open database file": it stops here and says which ``chown`` fixes it.

Each problem is one line on stderr and exit status 2; otherwise the command replaces this process
(``exec``: it stays process 1 and gets the signals). Standard library only, and quick: it runs before
every container's command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEFAULT_DATA = "/srv/podium/var"
DATA = Path(os.environ.get("PODIUM_DATA_DIR", DEFAULT_DATA))
THROWAWAY = "PODIUM_THROWAWAY"


def serves(argv: list[str]) -> bool:
    """Whether ``argv`` starts the web tier (``podium serve``, ``python -m app.cli serve``)."""
    words = [Path(arg).name for arg in argv]
    for n, word in enumerate(words[:-1]):
        if word in ("podium", "app.cli"):
            return words[n + 1] == "serve"
    return False


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
    os.execvp(argv[0], argv)  # noqa: S606 (the container's own command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
