"""What the commands share: one readable message and exit code 2 for bad input, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import typer

EXIT_INPUT = 2


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print one message on stderr and exit; the only way commands report bad input."""
    typer.echo(message.rstrip("\n"), err=True)
    raise typer.Exit(code)


def read_file(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        fail(f"cannot read the {what} {path}: it is a folder, not a file")
    except OSError as exc:
        fail(f"cannot read the {what} {path}: {exc.strerror or exc}")


def settings_or_fail() -> Any:
    """The settings from the ``PODIUM_*`` variables, or a message naming the bad one."""
    from pydantic import ValidationError

    from app.config import load_settings

    try:
        settings = load_settings()
    except ValidationError as exc:
        problems = "; ".join(f"PODIUM_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        fail(f"bad setting: {problems}")
    # The accounts module's default needs no call (nor its import).
    if settings.password_hash_profile != "rfc9106-low-memory":  # noqa: S105  (a profile's name)
        from app.services.accounts.users import use_password_profile

        use_password_profile(settings.password_hash_profile)
    return settings


def service_message(exc: Any) -> str:
    problems = getattr(exc, "problems", [])
    lines = [exc.message, *(f"- {p.get('where') or p.get('key')}: {p['message']}" for p in problems)]
    return "\n".join(lines)
