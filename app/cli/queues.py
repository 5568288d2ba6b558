"""``podium queue``: a competition's own queues on a running server, over its JSON API (organizers): create one,
issue, revoke and rotate its worker credentials, send a code phase's runs (and a program-scored phase's scoring)
to it or back, delete it (its phases go back to the platform), and list them with each worker's last contact and
the backlog. A refusal prints the server's reasons and exits with code 2."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

import typer

from app.cli.client import api_request, fail_refused, phase_ref, phase_url
from app.cli.common import fail

queue_app = typer.Typer(help="A competition's own queues, served by its organizers' workers.", no_args_is_help=True)

Server = Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")]
Token = Annotated[str, typer.Option("--token", help="An organizer's API token.")]
Out = Annotated[
    Path | None, typer.Option("--out", help="Write the credential to this file (readable by you alone), not stdout.")
]


def _queues(server: str, competition: str) -> str:
    return f"{server.rstrip('/')}/api/v1/competitions/{quote(competition, safe='')}/queues"


def _call(method: str, url: str, token: str, **kwargs: Any) -> Any:
    answer = api_request(method, url, headers={"Authorization": f"Bearer {token}"}, **kwargs)
    if answer.status_code >= 400:
        fail_refused(answer, as_json=False)
    return answer.json()


def _issued(body: dict[str, Any], out: Path | None) -> None:
    if out is None:
        typer.echo(body["credential"])
        return
    try:
        descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(body["credential"] + "\n")
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror}")
    typer.echo(f"credential {body['id']} written to {out}", err=True)


@queue_app.command("create")
def create_command(competition: str, name: str, server: Server, token: Token) -> None:
    """Create a queue of COMPETITION named NAME."""
    _call("POST", _queues(server, competition), token, json={"name": name})
    typer.echo(f"queue {name} created; issue a credential with: podium queue credential {competition} {name}")


@queue_app.command("list")
def list_command(
    competition: str,
    server: Server,
    token: Token,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """The competition's queues: phases, backlog, and each credential's last contact and current runs."""
    body = _call("GET", _queues(server, competition), token)
    if as_json:
        typer.echo(json.dumps(body, ensure_ascii=False))
        return
    for queue in body["queues"]:
        since = f", the oldest since {queue['oldest_waiting_since']}" if queue["waiting"] else ""
        scored = queue.get("scoring_phases") or []
        scoring = f" (scored here: {', '.join(scored)})" if scored else ""
        phases = ", ".join(queue["phases"]) or "no phase"
        typer.echo(f"{queue['name']}: {phases}{scoring}; {queue['waiting']} waiting{since}")
        for c in queue["credentials"]:
            state = "revoked" if c["revoked_at"] else ("live" if c["live"] else "silent")
            running = ", running " + ", ".join(map(str, c["running"])) if c["running"] else ""
            running += ", scoring " + ", ".join(map(str, c.get("scoring", []))) if c.get("scoring") else ""
            typer.echo(
                f"  {c['id']} {c['label'] or '-'}: {state}, last contact {c['last_contact_at'] or 'never'}{running}"
            )


@queue_app.command("credential")
def credential_command(
    competition: str,
    name: str,
    server: Server,
    token: Token,
    label: Annotated[str, typer.Option("--label", help="Which machine it is for.")] = "",
    out: Out = None,
) -> None:
    """Issue a worker credential for the queue; it is shown this once."""
    _issued(
        _call(
            "POST", f"{_queues(server, competition)}/{quote(name, safe='')}/credentials", token, json={"label": label}
        ),
        out,
    )


@queue_app.command("revoke")
def revoke_command(competition: str, name: str, credential_id: int, server: Server, token: Token) -> None:
    """Revoke a credential: its worker is refused at its next call."""
    _call("POST", f"{_queues(server, competition)}/{quote(name, safe='')}/credentials/{credential_id}/revoke", token)
    typer.echo(f"credential {credential_id} revoked")


@queue_app.command("rotate")
def rotate_command(
    competition: str, name: str, credential_id: int, server: Server, token: Token, out: Out = None
) -> None:
    """A new credential under the same label; the old one is revoked at once."""
    url = f"{_queues(server, competition)}/{quote(name, safe='')}/credentials/{credential_id}/rotate"
    _issued(_call("POST", url, token), out)


@queue_app.command("route")
def route_command(
    task: Annotated[str, typer.Argument(help="COMPETITION/TASK/PHASE, a code phase.")],
    queue: Annotated[str | None, typer.Argument(help="The queue; leave it out with --platform.")] = None,
    server: Server = "",
    token: Token = "",
    platform: Annotated[bool, typer.Option("--platform", help="Back to the platform's own workers.")] = False,
    scoring: Annotated[
        bool,
        typer.Option(
            "--scoring", help="A phase scored by a program: its scoring goes to the queue too (with its gold)."
        ),
    ] = False,
) -> None:
    """Send the phase's code runs to a queue of its competition, or back to the platform's (--platform)."""
    if (queue is None) == (not platform):
        fail("name a queue, or pass --platform to move the phase back to the platform's workers")
    if platform and scoring:
        fail("--scoring goes with a queue: --platform moves the phase's runs and scoring back")
    if not server or not token:
        fail("--server and --token are needed")
    body = _call("PUT", phase_url(server, phase_ref(task)) + "/queue", token, json={"queue": queue, "scoring": scoring})
    scored = " (and its scoring)" if body.get("scoring") else ""
    typer.echo(f"{task}: runs{scored} go to {body['queue'] or 'the platform'}")


@queue_app.command("delete")
def delete_command(competition: str, name: str, server: Server, token: Token) -> None:
    """Delete the queue: its phases go back to the platform's workers (what its workers hold now waits there at
    once), its credentials end."""
    body = _call("DELETE", f"{_queues(server, competition)}/{quote(name, safe='')}", token)
    moved = f"; back to the platform: {', '.join(body['phases'])}" if body["phases"] else ""
    typer.echo(f"queue {name} deleted{moved}")
