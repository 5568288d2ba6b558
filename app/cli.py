"""The ``podium`` command.

Every command that can fail on input prints one readable message on stderr and exits with code
2; no traceback reaches the user. Heavy imports (the web framework, the database) happen inside
the commands that need them, so ``podium score`` starts quickly.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from app.cli_baselines import baseline_app, baselines_command
from app.services.competitions import catalog

if TYPE_CHECKING:
    from scorers import ScorerDescription

app = typer.Typer(
    name="podium",
    help="Podium: a shared-task evaluation server.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

EXIT_INPUT = 2
#: The example bundles shipped with Podium (``podium demo``).
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


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


def load_options(path: Path | None) -> dict[str, Any]:
    """Scorer options from a JSON or YAML file (YAML is a superset of JSON)."""
    if path is None:
        return {}
    import yaml

    text = read_file(path, "config file")
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        fail(f"the config file {path} is neither JSON nor YAML: {exc}")
    if data is None:
        return {}
    if not isinstance(data, dict):
        fail(f"the config file {path} must hold a mapping of option names to values, not {type(data).__name__}")
    return data


def _percent(value: float) -> str:
    return f"{100 * value:6.2f}"


def format_report(report: dict[str, Any], described: ScorerDescription) -> str:
    """A readable report: the metrics with their meaning, then each breakdown as a table."""
    meanings = {m.name: m.meaning for m in described.metrics}
    lines = [f"{report['scorer']} (version {report['version']})", ""]
    width = max(len(name) for name in report["metrics"])
    for name, value in report["metrics"].items():
        mark = "*" if name == described.primary_metric else " "
        lines.append(f"{mark} {name:<{width}}  {value:.6f}  ({_percent(value).strip()} %)  {meanings.get(name, '')}")
    lines.append("")
    lines.append("* primary metric")
    for dimension, rows in report["breakdown"].items():
        if not rows:
            continue
        metric_names = list(next(iter(rows.values())).keys())
        key_width = max(len(dimension), *(len(str(k)) for k in rows))
        lines.append("")
        lines.append(f"By {dimension} (percent):")
        header = f"  {dimension:<{key_width}}  " + "  ".join(f"{m:>{max(6, len(m))}}" for m in metric_names)
        lines.append(header)
        for key, metrics in rows.items():
            cells = "  ".join(f"{_percent(metrics.get(m, 0.0)):>{max(6, len(m))}}" for m in metric_names)
            lines.append(f"  {key!s:<{key_width}}  {cells}")
    return "\n".join(lines)


@app.command("score")
def score_command(
    scorer: Annotated[str, typer.Option("--scorer", help="Scorer name (see `podium scorers`).")],
    gold: Annotated[Path, typer.Option("--gold", help="Gold file in the task's release format.")],
    submission: Annotated[Path, typer.Option("--submission", help="Submission file, or a zip holding it.")],
    config: Annotated[Path | None, typer.Option("--config", help="JSON or YAML file of scorer options.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Score a submission against a gold file, offline, exactly as the server does."""
    from scorers import ScorerError, get_scorer, unpack_submission
    from scorers.io import gc_paused

    options = load_options(config)
    try:
        instance = get_scorer(scorer, options)
        gold_bytes = read_file(gold, "gold file")
        submission_bytes = read_file(submission, "submission")
        # One pause for all three steps: between separate pauses the collector would walk
        # everything parsed so far (see gc_paused).
        with gc_paused():
            gold_data = instance.parse_gold(gold_bytes)
            content, _ = unpack_submission(submission_bytes)
            parsed = instance.parse_submission(content, instance.public_view(gold_data))
            report = instance.compute(gold_data, parsed).to_dict()
    except ScorerError as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        typer.echo(format_report(report, instance.describe()))


@app.command("scorers")
def scorers_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List the registered scorers with their metrics and options."""
    from scorers import all_scorers

    described = [cls.describe().to_dict() for cls in all_scorers()]
    if as_json:
        sys.stdout.write(json.dumps({"scorers": described}, ensure_ascii=False) + "\n")
        return
    for d in described:
        typer.echo(f"{d['name']} (version {d['version']}): {d['title']}")
        direction = "higher" if d["higher_is_better"] else "lower"
        typer.echo(f"  primary metric: {d['primary_metric']} ({direction} is better)")
        typer.echo(f"  gold: {d['gold_format']}")
        typer.echo(f"  submission: {d['submission_format']}")
        typer.echo("  metrics:")
        for m in d["metrics"]:
            typer.echo(f"    {m['name']}: {m['meaning']}")
        if d["options"]:
            typer.echo("  options:")
            for o in d["options"]:
                typer.echo(f"    {o['name']} (default {json.dumps(o['default'])}): {o['meaning']}")
        typer.echo("")


# -- the server and its database ---------------------------------------------------------------

db_app = typer.Typer(help="The database.", no_args_is_help=True)
user_app = typer.Typer(help="User accounts.", no_args_is_help=True)
token_app = typer.Typer(help="API tokens.", no_args_is_help=True)
competition_app = typer.Typer(help="Competitions.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(user_app, name="user")
app.add_typer(token_app, name="token")
app.add_typer(competition_app, name="competition")
app.add_typer(baseline_app, name="baseline")
app.command("baselines")(baselines_command)


def settings_or_fail() -> Any:
    """The settings from the ``PODIUM_*`` variables, or a message naming the bad one."""
    from pydantic import ValidationError

    from app.config import load_settings

    try:
        return load_settings()
    except ValidationError as exc:
        problems = "; ".join(f"PODIUM_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        fail(f"bad setting: {problems}")


@contextlib.contextmanager
def open_database(settings: Any) -> Iterator[Any]:
    """The database, migrated to the newest revision (so every command works on a fresh machine),
    and disposed of however the command ends."""
    from sqlalchemy.exc import SQLAlchemyError

    from app.storage.db import Database
    from app.storage.migrate import upgrade

    try:
        database = Database(settings.database_url)
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


@app.command("serve")
def serve_command(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    no_migrate: Annotated[
        bool, typer.Option("--no-migrate", help="Do not migrate; refuse to start unless `podium db upgrade` ran.")
    ] = False,
) -> None:
    """Apply the migrations, resume waiting jobs and serve the API. Scoring runs in this process, or,
    with PODIUM_BROKER_URL, in `podium worker` processes (this one then only sends jobs and sweeps)."""
    import uvicorn

    from app.main import create_app

    settings = settings_or_fail()
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
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"Podium is serving at http://{shown}:{port}/ (API: /api/v1, documentation: /docs)")
    if settings.broker_url:
        typer.echo("Jobs go to the broker of PODIUM_BROKER_URL; `podium worker` processes run them.")
    sys.stdout.flush()
    uvicorn.run(application, host=host, port=port, log_level="info")


@app.command("worker")
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
) -> None:
    """Run a worker of the distributed mode: jobs from the broker of PODIUM_BROKER_URL, and the sweeper."""
    from app.worker import run

    settings = settings_or_fail()
    if not settings.broker_url:
        fail("PODIUM_BROKER_URL is not set: workers take their jobs from a Redis or RabbitMQ broker")
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
            fail(_service_message(exc))
        session.commit()
        role = "site admin" if admin else "organizer" if organizer else "participant"
        typer.echo(f"created user {user.name} ({role})")


def _service_message(exc: Any) -> str:
    problems = getattr(exc, "problems", [])
    lines = [exc.message, *(f"- {p.get('where') or p.get('key')}: {p['message']}" for p in problems)]
    return "\n".join(lines)


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
    bundle: Annotated[Path, typer.Argument(help="The bundle's YAML file, or the folder holding competition.yaml.")],
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Folder for `data:` entries (default: PODIUM_DATA_DIR).")
    ] = None,
) -> None:
    """Put a competition online from a bundle; every mistake is reported with its key path."""
    from app.services.bundles.loader import load_bundle
    from app.services.bundles.spec import BundleError
    from app.services.errors import ServiceError

    settings = settings_or_fail()
    try:
        spec = load_bundle(bundle, data_dir or settings.data_dir)
    except BundleError as exc:
        fail(exc.summary())
    with open_database(settings) as database, database.session() as session:
        try:
            catalog.create_competition(session, spec)
        except ServiceError as exc:
            fail(_service_message(exc))
        session.commit()
    phases = sum(len(task.phases) for task in spec.tasks)
    typer.echo(f"created competition {spec.slug}: {len(spec.tasks)} task(s), {phases} phase(s)")


@app.command("demo")
def demo_command(
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Folder holding the real releases (like ../shared/data); else example data."),
    ] = None,
    examples: Annotated[Path, typer.Option("--examples", help="Folder of the example bundles.")] = EXAMPLES,
) -> None:
    """Set up the example competitions and two demo accounts (safe to run again; passwords are reset)."""
    from app.services.bundles.spec import BundleError
    from app.services.competitions import demo
    from app.services.errors import ServiceError

    settings = settings_or_fail()
    data_dir = data_dir or settings.data_dir
    with open_database(settings) as database, database.session() as session:
        try:
            report = demo.seed(session, examples, data_dir)
        except BundleError as exc:
            fail(exc.summary())
        except ServiceError as exc:
            fail(_service_message(exc))
        session.commit()
    source = f"the releases in {data_dir}" if data_dir else "the example data"
    typer.echo(f"Example competitions (from {source}):")
    for slug, created in report.competitions:
        typer.echo(f"  {slug:<14} {'created' if created else 'already there'}")
    typer.echo("Demo accounts (their passwords are reset each time `podium demo` runs):")
    for account in report.accounts:
        typer.echo(f"  {account.role:<12} user {account.name:<12} password {account.password}  token {account.token}")


# -- a client of a running server --------------------------------------------------------------


def _phase_ref(task: str) -> tuple[str, str, str]:
    parts = task.strip("/").split("/")
    if len(parts) != 3 or not all(parts):
        fail(f"--task must be COMPETITION/TASK/PHASE, like svident/detection/test; got {task!r}")
    return parts[0], parts[1], parts[2]


def _phase_url(server: str, ref: tuple[str, str, str]) -> str:
    from urllib.parse import quote

    competition, task, phase = (quote(part, safe="") for part in ref)
    return f"{server.rstrip('/')}/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}"


def _request(method: str, url: str, **kwargs: Any) -> Any:
    import httpx

    try:
        return httpx.request(method, url, timeout=kwargs.pop("timeout", 120), **kwargs)
    except httpx.HTTPError as exc:
        fail(f"cannot reach the server at {url}: {exc}")


def _refusal(response: Any) -> str:
    """The server's reasons for a 4xx/5xx, as lines for people."""
    try:
        body = response.json()
    except ValueError:
        return f"the server answered {response.status_code}: {response.text[:500]}"
    lines = [f"refused ({response.status_code} {body.get('error', '')}): {body.get('detail', '')}".rstrip()]
    for problem in body.get("problems") or []:
        where = problem.get("where") or problem.get("key") or ""
        lines.append(f"- {where}: {problem.get('message', '')}" if where else f"- {problem.get('message', '')}")
    if body.get("total", 0) > len(body.get("problems") or []):
        lines.append(f"... and {body['total'] - len(body['problems'])} more")
    return "\n".join(lines)


def _fail_refused(response: Any, as_json: bool) -> NoReturn:
    if as_json:
        with contextlib.suppress(ValueError):
            sys.stdout.write(json.dumps(response.json(), ensure_ascii=False) + "\n")
    fail(_refusal(response))


@app.command("submit")
def submit_command(
    file: Annotated[Path, typer.Argument(help="The prediction file (or a zip holding it).")],
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    token: Annotated[str, typer.Option("--token", help="Your API token.")],
    task: Annotated[str, typer.Option("--task", help="COMPETITION/TASK/PHASE.")],
    method: Annotated[str, typer.Option("--method", help="Name of your method.")] = "",
    description: Annotated[str, typer.Option("--description", help="What your method does.")] = "",
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the file is scored (or failed).")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds --wait waits at most.")] = 600,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Upload a prediction file to a running server; a refused file exits with code 2 and its reasons."""
    import time

    ref = _phase_ref(task)
    data = read_file(file, "submission")
    headers = {"Authorization": f"Bearer {token}"}
    response = _request(
        "POST",
        f"{_phase_url(server, ref)}/submissions",
        headers=headers,
        files={"file": (file.name, data)},
        data={"method_name": method, "method_description": description},
    )
    if response.status_code != 202:
        _fail_refused(response, as_json)
    body = response.json()
    deadline = time.monotonic() + timeout
    while wait and body["status"] in ("queued", "running"):
        if time.monotonic() > deadline:
            fail(f"submission {body['id']} is still {body['status']} after {timeout:g} s")
        time.sleep(0.3)
        polled = _request("GET", f"{server.rstrip('/')}/api/v1/submissions/{body['id']}", headers=headers)
        if polled.status_code != 200:
            _fail_refused(polled, as_json)
        body = polled.json()
    if as_json:
        sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
    else:
        typer.echo(f"submission {body['id']} to {'/'.join(ref)}: {body['status']}")
        for name, value in (body.get("metrics") or {}).items():
            typer.echo(f"  {name:<20} {value:.6f}")
        if body.get("metrics_hidden"):
            typer.echo("  (the numbers stay hidden until the organizers reveal this phase)")
        if body.get("message"):
            typer.echo(f"  {body['message']}")
    if body["status"] == "failed":
        raise typer.Exit(1)


@app.command("leaderboard")
def leaderboard_command(
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    task: Annotated[str, typer.Option("--task", help="COMPETITION/TASK/PHASE.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboard as one JSON object.")] = False,
) -> None:
    """Print a phase's leaderboard from a running server."""
    ref = _phase_ref(task)
    response = _request("GET", f"{_phase_url(server, ref)}/leaderboard")
    if response.status_code != 200:
        _fail_refused(response, as_json)
    board = response.json()
    if as_json:
        sys.stdout.write(json.dumps(board, ensure_ascii=False) + "\n")
        return
    primary = board["primary_metric"]
    typer.echo(f"{'/'.join(ref)}: ranked by {primary}")
    if board["hidden"] and not board["entries"]:
        typer.echo("  (hidden until the organizers reveal it)")
    for entry in board["entries"]:
        mark = " (baseline)" if entry["baseline"] else ""
        value = entry["metrics"].get(primary)
        shown = f"{100 * value:6.2f}" if isinstance(value, int | float) else "     -"
        system = f" [{entry['system']}]" if entry["system"] else ""
        typer.echo(f"  {entry['rank']:>3}  {shown}  {entry['team']}{system}{mark}")


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
