"""Commands that work on files of this machine, without a server: ``podium score`` (a submission
against a gold file, exactly as the server scores it: ``app.cli.scoring``), ``podium scorers`` and
``podium baselines`` (the registries)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli.common import fail
from app.cli.scoring import Refused, score


def score_command(
    scorer: Annotated[str, typer.Option("--scorer", help="Scorer name (see `podium scorers`).")],
    gold: Annotated[Path, typer.Option("--gold", help="Gold file in the task's release format.")],
    submission: Annotated[Path, typer.Option("--submission", help="Submission file, or a zip holding it.")],
    config: Annotated[Path | None, typer.Option("--config", help="JSON or YAML file of scorer options.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Score a submission against a gold file, offline, exactly as the server does."""
    # The work is app.cli.scoring's, which the console entry point also runs without Typer (start-up).
    try:
        score(scorer, gold, submission, config, as_json, typer.echo)
    except Refused as exc:
        fail(exc.message)


def _echo_options(options: list[dict[str, Any]]) -> None:
    """A scorer's or a baseline's options as both listings print them: name, default (as JSON), meaning."""
    if options:
        typer.echo("  options:")
        for o in options:
            typer.echo(f"    {o['name']} (default {json.dumps(o['default'])}): {o['meaning']}")


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
        typer.echo("  metrics (as the default options give them):")
        for m in d["metrics"]:
            shown = f"{m['format']}, {'higher' if m['higher_is_better'] else 'lower'} is better"
            typer.echo(f"    {m['name']} ({shown}): {m['meaning']}")
        _echo_options(d["options"])
        typer.echo("")


def baselines_command(
    scorer: Annotated[str | None, typer.Option("--scorer", help="Only the systems for this scorer.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List the baseline systems this installation can run, with their scorers and options, then those it
    cannot (their modules are not installed) with what to install."""
    from baselines import all_baselines, baselines_for

    described = [cls.describe() for cls in (all_baselines() if scorer is None else baselines_for(scorer))]
    if as_json:
        sys.stdout.write(json.dumps({"baselines": described}, ensure_ascii=False) + "\n")
        return
    if not described:
        typer.echo(f"no baseline writes submissions for {scorer!r}")
    unavailable = [d for d in described if not d["available"]]
    for d in (d for d in described if d["available"]):
        typer.echo(f"{d['name']} (version {d['version']}): {d['title']}")
        typer.echo(f"  scorers: {', '.join(d['scorers'])}")
        typer.echo(f"  runs on: {'a GPU when the worker has one' if d['wants_gpu'] else 'the CPU'}")
        if d["description"]:
            typer.echo(f"  {d['description']}")
        _echo_options(d["options"])
        typer.echo("")
    if unavailable:
        typer.echo("Not installed here, so this installation cannot run them:")
        for d in unavailable:
            typer.echo(f"  {d['name']} (version {d['version']}): needs {', '.join(d['missing'])}; {d['install']}")
