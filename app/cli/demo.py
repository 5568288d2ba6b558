"""``podium demo``: the example competitions and two demo accounts on the database of this machine, and the
fast hosted baselines run on them (in an embedded pool of this process, or queued for the server)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.admin import open_database
from app.cli.common import fail, service_message, settings_or_fail

#: The example bundles shipped with Podium (``podium demo``).
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run_queued_jobs(database: Any, settings: Any, timeout: float) -> bool:
    """Run every job waiting in the database (the baselines' runs, then their submissions' scoring) in an
    embedded pool of this process, as ``podium serve`` would; False when ``timeout`` passed first."""
    from app.services.jobs.kinds import JobContext
    from app.services.scoring.gold import GoldCache
    from app.worker.embedded import EmbeddedPool

    pool = EmbeddedPool(JobContext(database, settings, GoldCache(settings.gold_cache_size)), max(settings.workers, 1))
    pool.start()
    try:
        return pool.wait_idle(timeout)
    finally:
        pool.stop()


def _report_baselines(database: Any, queued: list[Any], finished: bool) -> None:
    """Each run's outcome, in a line; a failed one with the last line of its error (never silently)."""
    from app.storage.models import BaselineRun

    with database.session(read_only=True) as session:
        for item in queued:
            run = session.get(BaselineRun, item.id)
            status = run.status if run is not None else "missing"
            reason = (run.error or "").strip().splitlines()[-1:] if run is not None and run.error else []
            typer.echo(f"  {item.phase:<30} {item.baseline:<18} {status}{': ' + reason[0] if reason else ''}")
    if not finished:
        typer.echo("  (not all finished in time: `podium serve` runs the rest)")


def demo_command(
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Folder holding the real releases (like ../shared/data); else example data."),
    ] = None,
    examples: Annotated[Path, typer.Option("--examples", help="Folder of the example bundles.")] = EXAMPLES,
    baselines: Annotated[
        bool,
        typer.Option(
            "--baselines/--no-baselines",
            help="Run the fast hosted baselines (no GPU) once on each example phase: the boards get baseline rows.",
        ),
    ] = True,
    wait: Annotated[
        bool,
        typer.Option("--wait/--no-wait", help="Run the baselines now, or only queue them for `podium serve` to run."),
    ] = True,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds to wait for the baselines; the server finishes the rest.")
    ] = 600,
) -> None:
    """Set up the example competitions and two demo accounts (safe to run again: what exists, accounts
    included, is left as it is), and run the fast hosted baselines on them."""
    from app.services.bundles.spec import BundleError
    from app.services.competitions import demo
    from app.services.errors import ServiceError

    settings = settings_or_fail()
    data_dir = data_dir or settings.data_dir
    with open_database(settings) as database:
        with database.session() as session:
            try:
                report = demo.seed(session, examples, data_dir, baselines=baselines)
            except BundleError as exc:
                fail(exc.summary())
            except ServiceError as exc:
                fail(service_message(exc))
            session.commit()
        source = f"the releases in {data_dir}" if data_dir else "the example data"
        typer.echo(f"Example competitions (from {source}):")
        for slug, created in report.competitions:
            typer.echo(f"  {slug:<14} {'created' if created else 'already there'}")
        for note in report.notes:
            typer.echo(f"  ({note})")
        if report.baseline_runs and not wait:
            runner = "`podium worker --queues gpu` runs them" if settings.broker_url else "`podium serve` runs them"
            typer.echo(f"Hosted baselines: {len(report.baseline_runs)} runs queued; {runner}.")
        elif report.baseline_runs:
            typer.echo(f"Hosted baselines ({len(report.baseline_runs)} runs, once per example phase):")
            finished = _run_queued_jobs(database, settings, timeout)
            _report_baselines(database, report.baseline_runs, finished)
    typer.echo("Demo accounts (made once; running `podium demo` again never changes them):")
    for account in report.accounts:
        made = f"password {account.password}  token {account.token}" if account.password else "already there"
        typer.echo(f"  {account.role:<12} user {account.name:<12} {made}")
    if any(account.password is None for account in report.accounts):
        typer.echo("(their passwords and tokens are as printed when they were made; a new password:")
        typer.echo(" `podium user reset-link NAME`, a new token: `podium token create NAME`)")
