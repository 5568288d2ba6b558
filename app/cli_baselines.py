"""The baseline commands of ``podium``: ``podium baselines`` (the local registry) and
``podium baseline run`` (start a hosted run on a server, and follow it with ``--wait``).

``app.cli`` registers these commands, so this module imports its helpers (messages, requests,
refusals) inside the commands rather than at import time.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, Any

import typer

baseline_app = typer.Typer(help="Hosted baseline systems on a running server.", no_args_is_help=True)

#: Seconds between two looks at a run that ``--wait`` follows.
POLL_SECONDS = 1.0
FINISHED = ("succeeded", "failed", "cancelled")


def baselines_command(
    scorer: Annotated[str | None, typer.Option("--scorer", help="Only the systems for this scorer.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List the baseline systems this installation can run, with their scorers and options."""
    from baselines import all_baselines, baselines_for

    described = [cls.describe() for cls in (all_baselines() if scorer is None else baselines_for(scorer))]
    if as_json:
        sys.stdout.write(json.dumps({"baselines": described}, ensure_ascii=False) + "\n")
        return
    if not described:
        typer.echo(f"no baseline writes submissions for {scorer!r}")
    for d in described:
        typer.echo(f"{d['name']} (version {d['version']}): {d['title']}")
        typer.echo(f"  scorers: {', '.join(d['scorers'])}")
        typer.echo(f"  runs on: {'a GPU when the worker has one' if d['wants_gpu'] else 'the CPU'}")
        if d["description"]:
            typer.echo(f"  {d['description']}")
        if d["options"]:
            typer.echo("  options:")
            for o in d["options"]:
                typer.echo(f"    {o['name']} (default {json.dumps(o['default'])}): {o['meaning']}")
        typer.echo("")


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``k=v`` pairs as options; a value is read as JSON (``3``, ``0.5``, ``true``), else kept as text."""
    from app.cli import fail

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
    if progress["eta_seconds"] is not None and run["status"] == "running":
        parts.append(f"about {progress['eta_seconds']:.0f} s left")
    return ", ".join(parts)


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
    from app.cli import _fail_refused, _phase_ref, _phase_url, _request, fail

    ref = _phase_ref(task)
    options = parse_options(option or [])
    headers = {"Authorization": f"Bearer {token}"}
    response = _request(
        "POST", f"{_phase_url(server, ref)}/baseline-runs", headers=headers, json={"baseline": name, "options": options}
    )
    if response.status_code != 202:
        _fail_refused(response, as_json)
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
        polled = _request("GET", f"{api}/baseline-runs/{run['id']}", headers=headers)
        if polled.status_code != 200:
            _fail_refused(polled, as_json)
        run = polled.json()

    submission = None
    while run["status"] == "succeeded" and (submission is None or submission["status"] in ("queued", "running")):
        if submission is not None:
            if time.monotonic() > deadline:
                fail(f"submission {submission['id']} is still {submission['status']} after {timeout:g} s")
            time.sleep(POLL_SECONDS / 3)
        polled = _request("GET", f"{api}/submissions/{run['submission_id']}", headers=headers)
        if polled.status_code != 200:
            _fail_refused(polled, as_json)
        submission = polled.json()
    _print_outcome(run, submission, as_json)


def _print_outcome(run: dict[str, Any], submission: dict[str, Any] | None, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps({"run": run, "submission": submission}, ensure_ascii=False) + "\n")
    elif run["status"] == "failed":
        typer.echo(f"the run failed:\n{run['error']}", err=True)
    elif submission is not None:
        typer.echo(f"submission {submission['id']}: {submission['status']}")
        for metric, value in (submission.get("metrics") or {}).items():
            typer.echo(f"  {metric:<20} {value:.6f}")
        problem = (submission.get("organizer") or {}).get("message")
        if problem:
            typer.echo(f"  {problem}")
    if run["status"] != "succeeded" or (submission is not None and submission["status"] == "failed"):
        raise typer.Exit(1)
