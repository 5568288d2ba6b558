"""``podium storage``: where the server keeps its files (``app.storage.stores``).

``podium storage migrate --to disk|s3|db`` moves every blob into one store, each copy read back and
checked against its sha256 before its row points at it, so it may run while the server serves and may
be stopped and run again: it resumes where it stopped (``app.storage.blob_migration``).

``podium storage collect`` removes the files nothing refers to any more, safely while uploads of the same
contents go on (``app.storage.collect``); the sweeper of every process does the same once an hour.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli.common import fail, settings_or_fail

storage_app = typer.Typer(help="Where files are stored.", no_args_is_help=True)

STORES = ("db", "disk", "s3")


def _store(value: str | None, option: str) -> Any:
    from app.storage.enums import StoreName

    if value is None:
        return None
    if value not in STORES:
        fail(f"{option} must be one of {', '.join(STORES)}, not {value!r}")
    return StoreName(value)


@storage_app.command("migrate")
def migrate_command(
    to: Annotated[str, typer.Option("--to", help="The store to move files into: db, disk or s3.")],
    source: Annotated[
        str | None, typer.Option("--from", help="Move only the files kept in this store (default: every other one).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only the summary, not each file.")] = False,
) -> None:
    """Move every stored file into one store, verified by its sha256; safe to stop and run again."""
    from app.cli.admin import open_database
    from app.storage.blob_migration import Moved, migrate_blobs
    from app.storage.stores import ContentMismatch, StoreUnavailable

    target = _store(to, "--to")
    origin = _store(source, "--from")
    if origin is not None and origin == target:
        fail("--from and --to name the same store: nothing would move")
    settings = settings_or_fail()

    def moved(blob: Moved) -> None:
        if not quiet:
            typer.echo(f"moved blob {blob.blob_id} ({blob.size} bytes) from {blob.source} to {target}")

    with open_database(settings) as database:
        try:
            report = migrate_blobs(database, target, source=origin, on_moved=moved)
        except (StoreUnavailable, ContentMismatch) as exc:
            fail(str(exc).strip("'\""))
        except LookupError as exc:
            fail(f"a file is missing from its store: {exc}".replace("'", ""))
    typer.echo(f"moved {report.moved} files ({report.bytes} bytes) to the {target} store; none is left elsewhere")


@storage_app.command("collect")
def collect_command(
    grace_seconds: Annotated[
        int,
        typer.Option(
            "--grace-seconds", min=0, help="Leave files stored less than this many seconds ago (default 3600)."
        ),
    ] = 3600,
) -> None:
    """Remove the stored files nothing refers to any more (deleted submissions' files); safe while uploads run."""
    from datetime import timedelta

    from app.cli.admin import open_database
    from app.storage.collect import collect

    settings = settings_or_fail()
    with open_database(settings) as database:
        report = collect(database, grace=timedelta(seconds=grace_seconds))
    typer.echo(f"removed {report.files} files ({report.bytes} bytes) that nothing refers to")
