"""Deleting on a running server: ``podium delete-submission`` (a team, one of its submissions),
``delete-submissions`` (organizers, a phase's or one team's) and ``delete-competition`` (organizers); and
``podium user delete`` on the server's machine (an account). What may be deleted, and what is kept, is the
server's to say (``app.services.submissions.deletion``, ``.clearing``, ``app.services.competitions.removal``,
``app.services.accounts.removal``)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

import typer

from app.cli.client import api_request, fail_refused
from app.cli.common import fail, service_message, settings_or_fail

Server = Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")]
Token = Annotated[str, typer.Option("--token", help="Your API token.")]
Yes = Annotated[bool, typer.Option("--yes", help="Do not ask first.")]


def delete_submission_command(
    submission_id: Annotated[int, typer.Argument(min=1, help="The submission's number.")],
    server: Server,
    token: Token,
) -> None:
    """Delete one of your team's scored or failed submissions; a refusal exits with code 2 and its reason."""
    response = api_request(
        "DELETE",
        f"{server.rstrip('/')}/api/v1/submissions/{submission_id}",
        headers={"Authorization": f"Bearer {token}"},
    )
    if response.status_code != 204:
        fail_refused(response, False)
    typer.echo(f"submission {submission_id} is deleted")


def delete_competition_command(
    competition: Annotated[str, typer.Argument(help="The competition's short name (slug).")],
    server: Server,
    token: Token,
    yes: Yes = False,
) -> None:
    """Delete a competition you organize and everything of it (nothing is kept); a refusal exits with code 2."""
    if not yes:
        typer.confirm(f"Delete the competition {competition} and everything of it? This cannot be undone", abort=True)
    response = api_request(
        "DELETE",
        f"{server.rstrip('/')}/api/v1/competitions/{quote(competition, safe='')}",
        headers={"Authorization": f"Bearer {token}"},
    )
    if response.status_code != 200:
        fail_refused(response, False)
    body = response.json()
    typer.echo(
        f"competition {body['competition']} is deleted: {body['phases']} phase(s), {body['submissions']} "
        f"submission(s), {body['teams']} team(s)"
    )


def delete_submissions_command(
    task: Annotated[str, typer.Argument(help="COMPETITION/TASK/PHASE.")],
    server: Server,
    token: Token,
    team: Annotated[str | None, typer.Option("--team", help="Only this team's submissions.")] = None,
    yes: Yes = False,
) -> None:
    """Delete a phase's submissions, or one team's (organizers): those on a revealed board's final ranking are kept,
    those being scored stay until they end; a refusal exits with code 2."""
    parts = task.split("/")
    if len(parts) != 3 or not all(parts):
        fail(f"expected COMPETITION/TASK/PHASE, got {task!r}")
    if not yes:
        whose = f"team {team}'s submissions" if team else "every submission"
        typer.confirm(f"Delete {whose} of {task}? This cannot be undone", abort=True)
    competition, task_slug, phase = (quote(p, safe="") for p in parts)
    response = api_request(
        "DELETE",
        f"{server.rstrip('/')}/api/v1/competitions/{competition}/tasks/{task_slug}/phases/{phase}/submissions",
        headers={"Authorization": f"Bearer {token}"},
        params={"team": team} if team else None,
    )
    if response.status_code != 200:
        fail_refused(response, False)
    body = response.json()
    line = f"{body['deleted']} submission(s) deleted"
    if body["kept_for_record"]:
        line += f"; kept for the record (final ranking): {', '.join(map(str, body['kept_for_record']))}"
    if body["busy"]:
        line += f"; being scored, delete once they end: {', '.join(map(str, body['busy']))}"
    typer.echo(line)


def user_delete_command(
    name: Annotated[str, typer.Argument(help="The user whose account goes.")],
    yes: Yes = False,
) -> None:
    """Delete a user's account on the server's machine: what a revealed board keeps stays under 'deleted user #N',
    everything else goes, and their sessions and API tokens stop working at once."""
    from app.cli.admin import open_database
    from app.services.accounts import removal, users
    from app.services.errors import ServiceError

    if not yes:
        typer.confirm(f"Delete the account {name}? This cannot be undone", abort=True)
    with open_database(settings_or_fail()) as database, database.session() as session:
        try:
            removed = removal.delete_account(session, users.get_user(session, name), by="podium user delete")
        except ServiceError as exc:
            fail(service_message(exc))
        session.commit()
    typer.echo(
        f"the account {name} is deleted: {removed.submissions_deleted} submission(s) and {removed.teams_deleted} "
        f"team(s) deleted, {removed.submissions_kept} submission(s) kept for the record under '{removed.user}', "
        f"{removed.tokens_revoked} API token(s) revoked"
    )
