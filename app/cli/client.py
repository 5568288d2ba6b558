"""Commands that are clients of a running Podium server, over its JSON API, from any machine:
``podium submit``, ``podium leaderboard`` and ``podium baseline run``. A refusal prints the server's
reasons and exits with code 2."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from app.cli import direct
from app.cli.common import fail, read_file
from app.cli.display import PERCENT, Shown, formats_of, metric_lines, metric_text
from app.storage.enums import RunStatus, SubmissionStatus

baseline_app = typer.Typer(help="Hosted baseline systems on a running server.", no_args_is_help=True)

#: Seconds between two looks at a run that ``--wait`` follows.
POLL_SECONDS = 1.0
#: Statuses a submission or a run leaves by itself.
PENDING = (SubmissionStatus.QUEUED, SubmissionStatus.RUNNING, SubmissionStatus.AWAITING_RUN)
FINISHED = tuple(status for status in RunStatus if not status.active)


def phase_ref(task: str) -> tuple[str, str, str]:
    parts = task.strip("/").split("/")
    if len(parts) != 3 or not all(parts):
        fail(f"--task must be COMPETITION/TASK/PHASE, like svident/detection/test; got {task!r}")
    return parts[0], parts[1], parts[2]


def phase_url(server: str, ref: tuple[str, str, str]) -> str:
    from urllib.parse import quote

    competition, task, phase = (quote(part, safe="") for part in ref)
    return f"{server.rstrip('/')}/api/v1/competitions/{competition}/tasks/{task}/phases/{phase}"


def metric_formats(server: str, ref: tuple[str, str, str]) -> dict[str, Shown]:
    """How the phase's metrics are shown (``app.cli.display``), from its leaderboard's description; none when
    the server does not answer (the numbers are then shown as they are)."""
    response = api_request("GET", f"{phase_url(server, ref)}/leaderboard")
    if response.status_code != 200:
        return {}
    return formats_of(response.json().get("metrics", []))


def api_request(method: str, url: str, *, attempts: int = 1, **kwargs: Any) -> Any:
    """One request; with ``attempts`` > 1 tried again after connection errors, timeouts and
    502/503/504, each retry told on stderr (``app.cli.retrying``)."""
    import httpx

    from app.cli import retrying

    def say(line: str) -> None:
        typer.echo(line, err=True)

    timeout = kwargs.pop("timeout", 120)
    try:
        return retrying.request(method, url, attempts=attempts, say=say, timeout=timeout, **kwargs)
    except httpx.HTTPError as exc:
        fail(f"cannot reach the server at {url}: {exc}")


def refusal(response: Any) -> str:
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


def fail_refused(response: Any, as_json: bool) -> NoReturn:
    if as_json:
        with contextlib.suppress(ValueError):
            sys.stdout.write(json.dumps(response.json(), ensure_ascii=False) + "\n")
    fail(refusal(response))


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
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            help="Idempotency-Key of this upload (default: a new one); the same key again within a day "
            "returns the same submission.",
        ),
    ] = None,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Tries again after connection errors and 502/503/504.")
    ] = 5,
    direct_above: direct.DirectAbove = direct.DIRECT_ABOVE,
) -> None:
    """Upload a prediction file to a running server; a refused file exits with code 2 and its reasons.
    The upload carries an Idempotency-Key, so a retry after a lost answer never stores it twice. A large file
    goes straight to the server's object storage where it offers that (``app.cli.direct``)."""
    from app.cli.retrying import new_key

    ref, key = phase_ref(task), key or new_key()
    headers = {"Authorization": f"Bearer {token}"}
    response = None
    if direct.worth_it(file, direct_above):
        sent: dict[str, Any] = {"key": key, "method": method, "description": description, "retries": retries}
        response = direct.submit(api_request, phase_url(server, ref), file, headers, **sent)
    if response is None:
        response = api_request(
            "POST",
            f"{phase_url(server, ref)}/submissions",
            attempts=retries + 1,
            headers={**headers, "Idempotency-Key": key},
            files={"file": (file.name, read_file(file, "submission"))},
            data={"method_name": method, "method_description": description},
        )
    if response.status_code != 202:
        fail_refused(response, as_json)
    body = response.json()
    if wait:
        body = follow(server, body, headers, timeout=timeout, retries=retries, as_json=as_json)
    report_submission(server, ref, body, as_json)


def follow(
    server: str, body: dict[str, Any], headers: dict[str, str], *, timeout: float, retries: int, as_json: bool
) -> dict[str, Any]:
    """The submission ``body`` once it is scored or failed (its program run first, on a code phase)."""
    deadline = time.monotonic() + timeout
    while body["status"] in PENDING:
        if time.monotonic() > deadline:
            waiting = (body.get("code_run") or {}).get("waiting_for")
            why = f": its program's run waits for {waiting}" if waiting else ""
            fail(f"submission {body['id']} is still {body['status']} after {timeout:g} s{why}")
        time.sleep(0.3)
        polled = api_request(
            "GET", f"{server.rstrip('/')}/api/v1/submissions/{body['id']}", attempts=retries + 1, headers=headers
        )
        if polled.status_code != 200:
            fail_refused(polled, as_json)
        body = polled.json()
    return body


def report_submission(server: str, ref: tuple[str, str, str], body: dict[str, Any], as_json: bool) -> None:
    """Print the submission (its numbers as the pages show them); exit 1 when it failed."""
    if as_json:
        sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
    else:
        typer.echo(f"submission {body['id']} to {'/'.join(ref)}: {body['status']}")
        for line in metric_lines(body.get("metrics") or {}, metric_formats(server, ref)):
            typer.echo(line)
        if body.get("metrics_hidden"):
            typer.echo("  (the numbers stay hidden until the organizers reveal this phase)")
        if body.get("message"):
            typer.echo(f"  {body['message']}")
    if body["status"] == SubmissionStatus.FAILED:
        raise typer.Exit(1)


@baseline_app.command("upload")
def upload_command(
    file: Annotated[Path, typer.Argument(help="The program, a zip (as teams upload theirs to a code phase).")],
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    token: Annotated[str, typer.Option("--token", help="An organizer's API token.")],
    task: Annotated[str, typer.Option("--task", help="COMPETITION/TASK/PHASE.")],
    name: Annotated[str, typer.Option("--name", help="The baseline's name on the board.")] = "",
    wait: Annotated[bool, typer.Option("--wait", help="Wait until it ran and is scored (or failed).")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds --wait waits at most.")] = 3600,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Upload a program as a baseline of a code phase (organizers): it runs as a team's program does."""
    ref = phase_ref(task)
    data = read_file(file, "program")
    headers = {"Authorization": f"Bearer {token}"}
    response = api_request(
        "POST",
        f"{phase_url(server, ref)}/baseline-programs",
        headers=headers,
        files={"file": (file.name, data)},
        data={"name": name},
    )
    if response.status_code != 202:
        fail_refused(response, as_json)
    body = response.json()
    if wait:
        body = follow(server, body, headers, timeout=timeout, retries=5, as_json=as_json)
    report_submission(server, ref, body, as_json)


def leaderboard_command(
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    task: Annotated[str, typer.Option("--task", help="COMPETITION/TASK/PHASE.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboard as one JSON object.")] = False,
) -> None:
    """Print a phase's leaderboard from a running server."""
    ref = phase_ref(task)
    response = api_request("GET", f"{phase_url(server, ref)}/leaderboard")
    if response.status_code != 200:
        fail_refused(response, as_json)
    board = response.json()
    if as_json:
        sys.stdout.write(json.dumps(board, ensure_ascii=False) + "\n")
        return
    primary = board["primary_metric"]
    shown_as = formats_of(board["metrics"]).get(primary, Shown())
    in_percent = " (percent)" if shown_as.format == PERCENT else ""
    typer.echo(f"{'/'.join(ref)}: ranked by {shown_as.title or primary}{in_percent}")
    if board["hidden"] and not board["entries"]:
        typer.echo("  (hidden until the organizers reveal it)")
    for entry in board["entries"]:
        mark = " (baseline)" if entry["baseline"] else ""
        shown = f"{metric_text(entry['metrics'].get(primary), shown_as):>8}"
        system = f" [{entry['system']}]" if entry["system"] else ""
        typer.echo(f"  {entry['rank']:>3}  {shown}{interval_text(entry, shown_as)}  {entry['team']}{system}{mark}")
    if board.get("board") == "ladder":
        typer.echo("  a ladder board: a team's score moves only past the paired standard error of its last shown one")
    if any(entry.get("interval") for entry in board["entries"]):
        typer.echo("  [low-high]: the 95% interval; one group: entries the data cannot tell apart")
    if board.get("too_few_units"):
        typer.echo("  too few units to compare entries: no groups (which does not mean tied)")
    if board.get("few_units"):
        typer.echo("  * fewer than 20 units: the interval says little")
    if any(not (entry.get("interval") or {}).get("reliable", True) for entry in board["entries"]):
        typer.echo("  * or not a 95% interval (rough, zero width, a stratum too small): its label in --json")


def interval_text(entry: dict[str, Any], shown_as: Shown) -> str:
    """``  [61.20-70.05] group 1``: an entry's interval (in the primary metric's unit) and tied group, if any."""
    interval = entry.get("interval")
    if not interval or interval.get("low") is None:
        return ""
    # Percentages without their sign here: the line already says "%" after the score.
    low, high = (metric_text(interval[end], shown_as).removesuffix(" %") for end in ("low", "high"))
    flag = "*" if interval.get("few_units") or not interval.get("reliable", True) else " "
    group = f" group {entry['tied_group']}" if entry.get("tied_group") else ""
    words = "zero width" if interval.get("zero_width") else f"{low}-{high}"
    return f"  [{words}]{flag}{group}"


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``k=v`` pairs as options; a value is read as JSON (``3``, ``0.5``, ``true``), else kept as text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            fail(f"--option must be NAME=VALUE, like c=0.5; got {pair!r}")
        try:
            options[name.strip()] = json.loads(text)
        except ValueError:
            options[name.strip()] = text
    return options


def new_lines(before: str, after: str) -> list[str]:
    """The lines of log tail ``after`` that follow what ``before`` showed (the tail drops old lines)."""
    old, new = before.splitlines(), after.splitlines()
    for overlap in range(min(len(old), len(new)), 0, -1):
        if old[-overlap:] == new[:overlap]:
            return new[overlap:]
    return new


def describe_progress(run: dict[str, Any]) -> str:
    """One line: status, units done, rate and time left, as far as they are known."""
    progress = run["progress"]
    parts = [run["status"]]
    if progress["total"]:
        parts.append(f"{progress['done']}/{progress['total']} ({100 * (progress['fraction'] or 0):.1f} %)")
    if progress["rate"]:
        parts.append(f"{progress['rate']:.1f}/s")
    if progress["eta_seconds"] is not None and run["status"] == RunStatus.RUNNING:
        parts.append(f"about {progress['eta_seconds']:.0f} s left")
    return ", ".join(parts)


def final_command(
    submission: Annotated[int, typer.Argument(help="The submission's id.")],
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    token: Annotated[str, typer.Option("--token", help="Your API token.")],
    unmark: Annotated[bool, typer.Option("--unmark", help="Take the mark off instead.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Mark a submission as one of your team's final ones (phases with final_submissions; in a phase whose selection
    is chosen, the one that counts). A refusal (too many marked, not yours) exits with code 2 and the reason."""
    action = "unchoose" if unmark else "choose"
    url = f"{server.rstrip('/')}/api/v1/submissions/{submission}/{action}"
    response = api_request("POST", url, headers={"Authorization": f"Bearer {token}"})
    if response.status_code != 200:
        fail_refused(response, as_json)
    body = response.json()
    if as_json:
        sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
    else:
        typer.echo(f"submission {submission}: {'marked' if body['chosen'] else 'not marked'}")


@baseline_app.command("run")
def run_command(
    name: Annotated[str, typer.Argument(help="The baseline system (see `podium baselines`).")],
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    token: Annotated[str, typer.Option("--token", help="An organizer's API token.")],
    task: Annotated[str, typer.Option("--task", help="COMPETITION/TASK/PHASE.")],
    option: Annotated[
        list[str] | None, typer.Option("--option", help="NAME=VALUE for an option of the system (repeatable).")
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Follow the run, then wait until its output is scored.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds --wait waits at most.")] = 3600,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Start a hosted baseline run on a phase (organizers); a refused start exits with code 2 and the reason."""
    ref = phase_ref(task)
    options = parse_options(option or [])
    headers = {"Authorization": f"Bearer {token}"}
    response = api_request(
        "POST", f"{phase_url(server, ref)}/baseline-runs", headers=headers, json={"baseline": name, "options": options}
    )
    if response.status_code != 202:
        fail_refused(response, as_json)
    run = response.json()
    label = f"baseline run {run['id']} ({run['baseline']} {run['version']}) on {'/'.join(ref)}"
    if not wait:
        if as_json:
            sys.stdout.write(json.dumps(run, ensure_ascii=False) + "\n")
        else:
            typer.echo(f"{label}: {run['status']}")
        return

    api = f"{server.rstrip('/')}/api/v1"
    deadline = time.monotonic() + timeout
    shown, tail = "", ""
    while True:
        line = describe_progress(run)
        if not as_json and line != shown:
            typer.echo(f"{label}: {line}")
            shown = line
        if not as_json:
            for text in new_lines(tail, run["log_tail"]):
                typer.echo(f"  | {text}")
        tail = run["log_tail"]
        if run["status"] in FINISHED:
            break
        if time.monotonic() > deadline:
            fail(f"baseline run {run['id']} is still {run['status']} after {timeout:g} s")
        time.sleep(POLL_SECONDS)
        polled = api_request("GET", f"{api}/baseline-runs/{run['id']}", headers=headers)
        if polled.status_code != 200:
            fail_refused(polled, as_json)
        run = polled.json()

    submission = None
    while run["status"] == RunStatus.SUCCEEDED and (submission is None or submission["status"] in PENDING):
        if submission is not None:
            if time.monotonic() > deadline:
                fail(f"submission {submission['id']} is still {submission['status']} after {timeout:g} s")
            time.sleep(POLL_SECONDS / 3)
        polled = api_request("GET", f"{api}/submissions/{run['submission_id']}", headers=headers)
        if polled.status_code != 200:
            fail_refused(polled, as_json)
        submission = polled.json()
    _print_outcome(server, run, submission, as_json)


def _print_outcome(server: str, run: dict[str, Any], submission: dict[str, Any] | None, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps({"run": run, "submission": submission}, ensure_ascii=False) + "\n")
    elif run["status"] == RunStatus.FAILED:
        typer.echo(f"the run failed:\n{run['error']}", err=True)
    elif submission is not None:
        typer.echo(f"submission {submission['id']}: {submission['status']}")
        ref = (submission["competition"], submission["task"], submission["phase"])
        for line in metric_lines(submission.get("metrics") or {}, metric_formats(server, ref)):
            typer.echo(line)
        problem = (submission.get("organizer") or {}).get("message")
        if problem:
            typer.echo(f"  {problem}")
    if run["status"] != RunStatus.SUCCEEDED or (
        submission is not None and submission["status"] == SubmissionStatus.FAILED
    ):
        raise typer.Exit(1)
