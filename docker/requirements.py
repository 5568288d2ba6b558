"""Print the requirements that pyproject.toml declares, one a line, for ``pip install -r``.

    python docker/requirements.py                     # the dependencies every tier needs
    python docker/requirements.py --extras baselines  # what the extras add (comma-separated)

The image installs the dependencies in a layer of their own, before the code is copied in, so a
change to the code rebuilds only the last layers, and both variants of the image (with and without
extras) share every layer up to their extras. pip cannot install a project's dependencies without
the project; this reads them with the standard library alone (it runs before anything else is
installed). An extra that names another of the project's extras (``podium[baselines-light]``) is
expanded to that extra's requirements.
"""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def requirements(project: dict[str, object], extras: list[str]) -> list[str]:
    """The project's dependencies (no ``extras``), or the requirements of the named extras."""
    if not extras:
        return list(project["dependencies"])  # type: ignore[call-overload]
    optional: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    name = str(project["name"])
    found: list[str] = []
    todo = list(extras)
    seen: set[str] = set()
    while todo:
        extra = todo.pop(0)
        if extra in seen:
            continue
        seen.add(extra)
        if extra not in optional:
            raise SystemExit(f"pyproject.toml has no extra {extra!r}; it has: {', '.join(sorted(optional))}")
        for requirement in optional[extra]:
            own = re.fullmatch(rf"{re.escape(name)}\[([^\]]+)\]", requirement.replace(" ", ""))
            if own:
                todo.extend(own.group(1).split(","))
            elif requirement not in found:
                found.append(requirement)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--extras", default="", help="comma-separated extras (default: the dependencies)")
    args = parser.parse_args()
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = [extra.strip() for extra in args.extras.split(",") if extra.strip()]
    print("\n".join(requirements(project, extras)))


if __name__ == "__main__":
    main()
