"""Commands that work on files of this machine, without a server: ``podium score`` (a submission
against a gold file, exactly as the server scores it), ``podium scorers`` and ``podium baselines``
(the registries)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli.common import fail, read_file
from app.cli.display import metric_text

if TYPE_CHECKING:
    from scorers import ScorerDescription


def load_options(path: Path | None) -> dict[str, Any]:
    """Scorer options from a JSON or YAML file (YAML is a superset of JSON)."""
    if path is None:
        return {}
    import yaml

    from codalab.bounded_yaml import load_bounded

    text = read_file(path, "config file")
    try:
        data = load_bounded(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        fail(f"the config file {path} is neither JSON nor YAML: {exc}")
    if data is None:
        return {}
    if not isinstance(data, dict):
        fail(f"the config file {path} must hold a mapping of option names to values, not {type(data).__name__}")
    return data


def format_report(report: dict[str, Any], described: ScorerDescription) -> str:
    """A readable report: the metrics with their meaning, then each breakdown as a table."""
    meanings = {m.name: m.meaning for m in described.metrics}
    formats = {m.name: m.format for m in described.metrics}
    lines = [f"{report['scorer']} (version {report['version']})", ""]
    width = max(len(name) for name in report["metrics"])
    shown = {name: metric_text(value, formats.get(name, "number")) for name, value in report["metrics"].items()}
    value_width = max(len(text) for text in shown.values())
    for name in report["metrics"]:
        mark = "*" if name == described.primary_metric else " "
        lines.append(f"{mark} {name:<{width}}  {shown[name]:>{value_width}}  {meanings.get(name, '')}".rstrip())
    lines.append("")
    lines.append("* primary metric; fractions in percent (--json gives them in [0, 1])")
    for dimension, rows in report["breakdown"].items():
        if not rows:
            continue
        metric_names = list(next(iter(rows.values())).keys())
        key_width = max(len(dimension), *(len(str(k)) for k in rows))
        lines.append("")
        lines.append(f"By {dimension}:")
        widths = [max(8, len(m)) for m in metric_names]
        columns = zip(metric_names, widths, strict=True)
        header = f"  {dimension:<{key_width}}  " + "  ".join(f"{m:>{w}}" for m, w in columns)
        lines.append(header)
        for key, metrics in rows.items():
            cells = "  ".join(
                f"{metric_text(metrics.get(m), formats.get(m, 'number')):>{w}}"
                for m, w in zip(metric_names, widths, strict=True)
            )
            lines.append(f"  {key!s:<{key_width}}  {cells}")
    return "\n".join(lines)


def score_command(
    scorer: Annotated[str, typer.Option("--scorer", help="Scorer name (see `podium scorers`).")],
    gold: Annotated[Path, typer.Option("--gold", help="Gold file in the task's release format.")],
    submission: Annotated[Path, typer.Option("--submission", help="Submission file, or a zip holding it.")],
    config: Annotated[Path | None, typer.Option("--config", help="JSON or YAML file of scorer options.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Score a submission against a gold file, offline, exactly as the server does."""
    import gc

    from scorers import OptionsError, ScorerError, get_scorer, unpack_submission
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
            del gold_bytes  # the file's bytes are not held while the submission is read: a lower peak
            content = submission_bytes if instance.raw_submission else unpack_submission(submission_bytes)[0]
            del submission_bytes
            parsed = instance.parse_submission(content, instance.public_view(gold_data))
            del content
            report = instance.compute(gold_data, parsed).to_dict()
            # Everything parsed is alive until the command returns and holds no cycles, but the collector's
            # first pass after the pause would walk all of it (young objects all) while the report is written.
            # Frozen objects are left out of every pass; reference counting still frees them.
            gc.freeze()
    except OptionsError as exc:
        fail(f"the options in {config}: {exc.located}" if config else exc.located)
    except ScorerError as exc:
        fail(str(exc))
    try:
        if as_json:
            sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
        else:
            typer.echo(format_report(report, instance.described()))
    finally:
        gc.unfreeze()  # for callers in the same process (tests): back to the oldest generation, not walked now


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
