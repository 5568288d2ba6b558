"""Commands that run the server or change its database directly, on the machine that holds it:
``podium db``, ``user``, ``token``, ``competition``, ``serve`` and ``worker`` (``demo`` is in demo.py)."""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.common import fail, service_message, settings_or_fail
from app.cli.listening import listen_or_fail

db_app = typer.Typer(help="The database.", no_args_is_help=True)
user_app = typer.Typer(help="User accounts.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens.", no_args_is_help=True)
competition_app = typer.Typer(help="Competitions.", no_args_is_help=True)


@contextlib.contextmanager
def open_database(settings: Any) -> Iterator[Any]:
    """The database, migrated to the newest revision (so every command works on a fresh machine),
    and disposed of however the command ends."""
    from sqlalchemy.exc import SQLAlchemyError

    from app.storage.db import Database
    from app.storage.migrate import upgrade

    try:
        database = Database.from_settings(settings)
    except (SQLAlchemyError, ValueError, OSError) as exc:
        fail(f"cannot open the database {settings.database_url}: {exc}")
    try:
        try:
            upgrade(database.engine)
        except (SQLAlchemyError, OSError) as exc:
            fail(f"cannot migrate the database {settings.database_url}: {exc}")
        yield database
    finally:
        database.dispose()


@db_app.command("upgrade")
def db_upgrade_command() -> None:
    """Apply the migrations that the database lacks."""
    from app.storage.migrate import current_revision

    with open_database(settings_or_fail()) as database:
        typer.echo(f"the database is at revision {current_revision(database.engine)}")


def load_plugins_or_fail(settings: Any) -> None:
    """Import the modules of ``PODIUM_PLUGINS`` (extra scorers and baselines), or say which failed."""
    from app.plugins import PluginError, load_plugins

    try:
        load_plugins(settings.plugin_modules)
    except PluginError as exc:
        fail(str(exc))


def check_schema(settings: Any) -> None:
    """Fail unless the database is reachable and at the newest revision (for ``serve --no-migrate``)."""
    from alembic.script import ScriptDirectory
    from sqlalchemy.exc import SQLAlchemyError

    from app.storage.db import Database
    from app.storage.migrate import alembic_config, current_revision

    database = Database(settings.database_url)
    try:
        current = current_revision(database.engine)
    except SQLAlchemyError as exc:
        fail(f"cannot reach the database {settings.database_url}: {exc}")
    finally:
        database.dispose()
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if current != head:
        fail(f"the database is at revision {current or 'none'}, not {head}: run `podium db upgrade` first")


def serve_command(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    no_migrate: Annotated[
        bool, typer.Option("--no-migrate", help="Do not migrate; refuse to start unless `podium db upgrade` ran.")
    ] = False,
    check_port: Annotated[
        bool,
        typer.Option("--check-port", help="Only check that the port is free: exit 0, or 2 saying it is in use."),
    ] = False,
) -> None:
    """Apply the migrations, resume waiting jobs and serve the API. Scoring runs in this process, or,
    with PODIUM_BROKER_URL, in `podium worker` processes (this one then only sends jobs and sweeps)."""
    listening = listen_or_fail(host, port)
    with contextlib.closing(listening):
        if not check_port:
            _serve_on(listening, host, port, no_migrate=no_migrate)


def _serve_on(listening: socket.socket, host: str, port: int, *, no_migrate: bool) -> None:
    """Everything `podium serve` does once its port is bound; the caller closes the socket however this
    ends (a refusal here must not leave the port held by the process that asked)."""
    import uvicorn

    from app.main import create_app

    settings = settings_or_fail()
    if settings.broker_url and not settings.secret_key:
        # Each process would sign cookies with a random key of its own: a login made through one web
        # process would be anonymous on the next (docs/DEPLOYMENT.md).
        fail(
            "PODIUM_SECRET_KEY is not set: with PODIUM_BROKER_URL every web process must sign session cookies "
            "with the same key (e.g. PODIUM_SECRET_KEY=$(openssl rand -hex 32))"
        )
    load_plugins_or_fail(settings)
    if no_migrate:
        check_schema(settings)
    else:
        with open_database(settings):
            pass
    try:
        application = create_app(settings)
    except ValueError as exc:
        fail(str(exc))
    if settings.password_hash_profile == "cheapest":  # noqa: S105  (a profile's name, not a password)
        typer.echo(
            "warning: PODIUM_PASSWORD_HASH_PROFILE=cheapest stores passwords with hashes that are cheap to break: "
            "it is meant for test suites, not for a server people use",
            err=True,
        )
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"Podium is serving at http://{shown}:{port}/ (API: /api/v1, documentation: /docs)")
    if settings.broker_url:
        typer.echo("Jobs go to the broker of PODIUM_BROKER_URL; `podium worker` processes run them.")
    sys.stdout.flush()
    server = uvicorn.Server(uvicorn.Config(application, host=host, port=port, log_level="info"))
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[listening])
    if not server.started:
        fail("the server did not start (its log above says why)", 1)


def worker_command(
    queues: Annotated[
        str, typer.Option("--queues", help="Queues to take jobs from, comma-separated: scoring, gpu.")
    ] = "scoring",
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", min=1, help="Jobs at a time (default: one per CPU; 1 with the gpu queue)."),
    ] = None,
    ping: Annotated[
        bool, typer.Option("--ping", help="Only check: exit 0 if a worker on this machine answers a ping, else 1.")
    ] = False,
    loglevel: Annotated[str, typer.Option("--loglevel", help="debug, info, warning or error.")] = "info",
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote",
            help="Serve a competition's own queue from this machine: the Podium server's URL (no database or "
            "broker needed; the credential comes from --credential-file or PODIUM_WORKER_CREDENTIAL).",
        ),
    ] = None,
    credential_file: Annotated[
        Path | None, typer.Option("--credential-file", help="A file holding the queue's worker credential.")
    ] = None,
    poll: Annotated[float, typer.Option("--poll", min=0.1, help="Seconds between asks while no run waits.")] = 5.0,
) -> None:
    """Run a worker of the distributed mode: jobs from the broker of PODIUM_BROKER_URL, and the sweeper; or, with
    --remote, a worker of a competition's own queue that speaks to the server over HTTPS."""
    if remote is not None:
        _remote_worker(remote, credential_file, poll, loglevel)
        return
    settings = settings_or_fail()
    if not settings.broker_url:
        fail("PODIUM_BROKER_URL is not set: workers take their jobs from a Redis or RabbitMQ broker")
    if not ping:
        _warn_without_sandbox(settings, queues)
    from app.worker import run

    if ping:
        try:
            nodes = run.ping_local(settings, timeout=settings.broker_timeout_seconds)
        except Exception as exc:  # whatever the broker's client raises: the check failed
            fail(f"cannot reach the broker: {type(exc).__name__}: {exc}", code=1)
        if not nodes:
            fail("no worker on this machine answered the ping", code=1)
        typer.echo(f"answered: {', '.join(nodes)}")
        return
    try:
        names = run.parse_queues(queues)
    except ValueError as exc:
        fail(str(exc))
    load_plugins_or_fail(settings)
    raise typer.Exit(run.run_worker(settings, names, concurrency, loglevel.lower()))


def _remote_worker(url: str, credential_file: Path | None, poll: float, loglevel: str) -> None:
    """``podium worker --remote``: the credential from the file or PODIUM_WORKER_CREDENTIAL, then serve."""
    import logging
    import os

    if credential_file is not None:
        try:
            credential = credential_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            fail(f"cannot read the credential file {credential_file}: {exc.strerror}")
    else:
        credential = os.environ.get("PODIUM_WORKER_CREDENTIAL", "").strip()
    if not credential:
        fail("no worker credential: pass --credential-file FILE or set PODIUM_WORKER_CREDENTIAL")
    if not url.startswith(("http://", "https://")):
        fail(f"--remote must be the server's http:// or https:// URL, not {url!r}")
    settings = settings_or_fail()
    logging.basicConfig(level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if settings.program_sandbox == "bwrap":  # running programs is all this worker does: refuse to start without
        from sandbox import SandboxUnavailable, check_available

        try:
            check_available(require_cgroup=not settings.sandbox_allow_no_cgroup)
        except SandboxUnavailable as exc:
            fail(f"this machine cannot run programs in the sandbox: {exc}")
    from app.worker import remote

    raise typer.Exit(remote.serve(url, credential, settings, poll_seconds=poll))


def _warn_without_sandbox(settings: Any, queues: str) -> None:
    """Say at start, in one line, why a worker of the gpu queue cannot run programs (its code runs wait for a
    worker that can, ``code.placement``). The worker still starts: the same queue carries the hosted baselines,
    which need no sandbox."""
    from app.services.jobs.kinds import GPU
    from sandbox import SandboxUnavailable, check_available

    if GPU not in {name.strip() for name in queues.split(",")} or settings.program_sandbox != "bwrap":
        return
    try:
        check_available(require_cgroup=not settings.sandbox_allow_no_cgroup)
    except SandboxUnavailable as exc:
        warning = f"warning: this worker cannot run the {GPU} queue's code runs (they wait for one that can): {exc}"
        typer.echo(warning, err=True)


def read_password() -> str:
    """A password from stdin: asked twice without echo on a terminal, else the first line."""
    import getpass

    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if getpass.getpass("Password again: ") != first:
            fail("the two passwords differ")
        return first
    line = sys.stdin.readline()
    if not line:
        fail('no password on stdin (pipe it in, e.g. `echo "$PASSWORD" | podium user create NAME`)')
    return line.rstrip("\r\n")


@user_app.command("create")
def user_create_command(
    name: Annotated[str, typer.Argument(help="The user name.")],
    organizer: Annotated[bool, typer.Option("--organizer", help="May create competitions.")] = False,
    admin: Annotated[bool, typer.Option("--admin", help="Site admin: may do anything.")] = False,
    email: Annotated[str | None, typer.Option("--email", help="E-mail address.")] = None,
) -> None:
    """Create an account; the password is read from stdin."""
    from app.services.accounts import users
    from app.services.errors import ServiceError

    password = read_password()
    with open_database(settings_or_fail()) as database, database.session() as session:
        try:
            user = users.create_user(session, name, password, email=email, is_organizer=organizer, is_admin=admin)
        except ServiceError as exc:
            fail(service_message(exc))
        session.commit()
        role = "site admin" if admin else "organizer" if organizer else "participant"
        typer.echo(f"created user {user.name} ({role})")


@user_app.command("reset-link")
def user_reset_link_command(
    name: Annotated[str, typer.Argument(help="The user who forgot the password.")],
    hours: Annotated[float, typer.Option("--hours", help="How long the link works.")] = 24,
    url: Annotated[
        str | None, typer.Option("--url", help="The server's address as people reach it (default: PODIUM_PUBLIC_URL).")
    ] = None,
) -> None:
    """Print a one-time link that sets a new password (there is no mail: hand it over yourself)."""
    from app.services.accounts import users
    from app.services.errors import ServiceError

    settings = settings_or_fail()
    with open_database(settings) as database, database.session() as session:
        try:
            token = users.issue_reset_link(session, users.get_user(session, name), hours)
        except ServiceError as exc:
            fail(service_message(exc))
        session.commit()
    typer.echo(f"{(url or settings.public_url).rstrip('/')}/reset/{token}")


@user_app.command("sign-out")
def user_sign_out_command(name: Annotated[str, typer.Argument(help="The user to sign out.")]) -> None:
    """End every browser session of the user and revoke every API token of theirs."""
    from app.services.accounts import users
    from app.services.errors import ServiceError

    with open_database(settings_or_fail()) as database, database.session() as session:
        try:
            user = users.get_user(session, name)
            tokens = users.sign_out_everywhere(session, user)
        except ServiceError as exc:
            fail(service_message(exc))
        session.commit()
    typer.echo(f"signed {user.name} out everywhere: every session ended, {tokens} API token(s) revoked")


@token_app.command("create")
def token_create_command(
    name: Annotated[str, typer.Argument(help="The user the token acts for.")],
    label: Annotated[str, typer.Option("--label", help="A note to tell tokens apart.")] = "",
) -> None:
    """Issue an API token and print it (only the token: it is not shown again)."""
    from app.services.accounts import users

    with open_database(settings_or_fail()) as database, database.session() as session:
        user = users.find_user(session, name)
        if user is None:
            fail(f"there is no user named {name!r}")
        token = users.issue_token(session, user, label)
        session.commit()
    typer.echo(token)


@competition_app.command("create")
def competition_create_command(
    bundle: Annotated[
        Path,
        typer.Argument(
            help="The bundle's YAML file, the folder holding competition.yaml, or a zip of it "
            "(Podium, CodaLab v1.5 or Codabench v2)."
        ),
    ],
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Folder for `data:` entries (default: PODIUM_DATA_DIR).")
    ] = None,
) -> None:
    """Put a competition online from a bundle; every mistake is reported with its key path."""
    from app.services.bundles.codalab_bundles import read_bundle
    from app.services.bundles.spec import BundleError
    from app.services.bundles.uploads import bundle_from_upload
    from app.services.code.settings import caps_of
    from app.services.competitions import catalog
    from app.services.errors import ServiceError

    settings = settings_or_fail()
    folder = data_dir or settings.data_dir
    try:
        if bundle.is_file() and bundle.suffix.lower() == ".zip":
            data = bundle.read_bytes()
            loaded = bundle_from_upload(data, data_dir=folder, max_bytes=settings.max_bundle_bytes, may_read_data=True)
        else:
            loaded = read_bundle(bundle, folder)
    except BundleError as exc:
        fail(exc.summary())
    except OSError as exc:
        fail(f"cannot read {bundle}: {exc.strerror or exc}")
    spec = loaded.spec
    with open_database(settings) as database, database.session() as session:
        try:
            catalog.create_competition(session, spec, code_caps=caps_of(settings))
        except ServiceError as exc:
            fail(service_message(exc))
        session.commit()
    phases = sum(len(task.phases) for task in spec.tasks)
    source = "" if loaded.format == "podium" else f" from a {loaded.format} bundle"
    typer.echo(f"created competition {spec.slug}{source}: {len(spec.tasks)} task(s), {phases} phase(s)")
    for key, message in loaded.warnings:
        typer.echo(f"warning: {key}: {message}" if key else f"warning: {message}", err=True)
