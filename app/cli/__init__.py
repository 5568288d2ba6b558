"""The ``podium`` command, in three parts:

- ``offline``: files on this machine, no server (``score``, ``scorers``, ``baselines``);
- ``admin``: the server and its database (``db``, ``user``, ``token``, ``competition``, ``demo``,
  ``serve``, ``worker``);
- ``client``: a client of a running server over its JSON API (``submit``, ``leaderboard``,
  ``baseline run``).

Every command that can fail on input prints one readable message on stderr and exits with code
2 (``common``); no traceback reaches the user. Heavy imports (the web framework, the database)
happen inside the commands that need them, so ``podium score`` starts quickly.
"""

from __future__ import annotations

import typer

from app.cli import admin, client, demo, offline

app = typer.Typer(
    name="podium",
    help="Podium: a shared-task evaluation server.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

app.command("score")(offline.score_command)
app.command("scorers")(offline.scorers_command)
app.command("baselines")(offline.baselines_command)

app.add_typer(admin.db_app, name="db")
app.add_typer(admin.user_app, name="user")
app.add_typer(admin.token_app, name="token")
app.add_typer(admin.competition_app, name="competition")
app.command("demo")(demo.demo_command)
app.command("serve")(admin.serve_command)
app.command("worker")(admin.worker_command)

app.command("submit")(client.submit_command)
app.command("leaderboard")(client.leaderboard_command)
app.add_typer(client.baseline_app, name="baseline")


def main() -> None:
    """Console entry point."""
    app()
