"""The ``podium`` command, in three parts:

- ``offline``: files on this machine, no server (``score``, ``scorers``, ``baselines``);
- ``admin``: the server and its database (``db``, ``user``, ``token``, ``competition``, ``demo``,
  ``serve``, ``worker``, ``storage``);
- ``client``: a client of a running server over its JSON API (``submit``, ``leaderboard``,
  ``baseline run``, ``queue``).

Every command that can fail on input prints one readable message on stderr and exits with code
2 (``common``); no traceback reaches the user. Heavy imports (the web framework, the database)
happen inside the commands that need them, so ``podium score`` starts quickly. The Typer application (``app``) is
built on first use: the console entry point runs a plain ``podium score`` command line without it
(``app.cli.scoring``), since importing Typer takes about as long as starting Python.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

    app: typer.Typer


def _application() -> typer.Typer:
    """The ``podium`` command as a Typer application, every command registered."""
    import typer

    from app.cli import admin, client, deletion, demo, offline, queues, storage

    built = typer.Typer(
        name="podium",
        help="Podium: a shared-task evaluation server.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )

    built.command("score")(offline.score_command)
    built.command("scorers")(offline.scorers_command)
    built.command("baselines")(offline.baselines_command)

    built.add_typer(admin.db_app, name="db")
    built.add_typer(admin.user_app, name="user")
    built.add_typer(admin.token_app, name="token")
    built.add_typer(admin.competition_app, name="competition")
    built.command("demo")(demo.demo_command)
    built.command("serve")(admin.serve_command)
    built.command("worker")(admin.worker_command)
    built.add_typer(storage.storage_app, name="storage")

    built.command("submit")(client.submit_command)
    built.command("delete-submission")(deletion.delete_submission_command)
    built.command("delete-submissions")(deletion.delete_submissions_command)
    built.command("delete-competition")(deletion.delete_competition_command)
    admin.user_app.command("delete")(deletion.user_delete_command)
    built.command("leaderboard")(client.leaderboard_command)
    built.command("final")(client.final_command)
    built.add_typer(client.baseline_app, name="baseline")
    built.add_typer(queues.queue_app, name="queue")
    return built


def __getattr__(name: str) -> Any:
    """``app``, built on first use and kept."""
    if name == "app":
        built = globals()["app"] = _application()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console entry point: a plain ``podium score`` runs without Typer; every other command line goes through it."""
    if sys.argv[1:2] == ["score"]:
        from app.cli.scoring import quick_score

        quick_score(sys.argv[2:])  # exits, unless the command line is Typer's to read
    __getattr__("app")()
