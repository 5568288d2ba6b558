"""``podium delete-submission``: a team deleting one of its submissions on a running server (what may be deleted
is the server's to say: ``app.services.submissions.deletion``)."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli.client import api_request, fail_refused


def delete_submission_command(
    submission_id: Annotated[int, typer.Argument(min=1, help="The submission's number.")],
    server: Annotated[str, typer.Option("--server", help="The server's address, like http://127.0.0.1:8000.")],
    token: Annotated[str, typer.Option("--token", help="Your API token.")],
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
