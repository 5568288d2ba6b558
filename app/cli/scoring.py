"""``podium score`` without Typer: the command's work (``score``), which ``offline.score_command`` runs for Typer,
and ``quick_score``, which ``app.cli.main`` runs for an ordinary command line before Typer is imported.

Start-up is most of a test-size ``podium score`` (Typer and Click take about as long to import as Python takes to
start), so the console entry point reads a plain ``podium score --scorer S --gold G --submission F [--config C]
[--json]`` itself and hands anything else (``--help``, a missing or unknown option, a value that starts with ``-``)
to the Typer application, whose messages are the command's. Both ways run ``score``, print the same bytes and exit
with the same code: one readable message on stderr and exit code 2 for bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scorers import ScorerDescription

EXIT_INPUT = 2


class Refused(Exception):
    """Bad input: the one message the command prints on stderr before it exits with code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def read_file(path: Path, what: str) -> bytes:
    """The file's bytes, or ``Refused`` naming it (the wording of ``app.cli.common.read_file``)."""
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise Refused(f"cannot read the {what} {path}: it is a folder, not a file") from None
    except OSError as exc:
        raise Refused(f"cannot read the {what} {path}: {exc.strerror or exc}") from None


def load_options(path: Path | None) -> dict[str, Any]:
    """Scorer options from a JSON or YAML file (YAML is a superset of JSON)."""
    if path is None:
        return {}
    import yaml

    from codalab.bounded_yaml import load_bounded

    text = read_file(path, "config file")
    try:
        # The bytes as they are: PyYAML reads a stream's encoding from its byte-order mark (UTF-8, UTF-16).
        data = load_bounded(text) if text.strip() else {}  # type: ignore[arg-type]
    except yaml.YAMLError as exc:
        raise Refused(f"the config file {path} is neither JSON nor YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise Refused(
            f"the config file {path} must hold a mapping of option names to values, not {type(data).__name__}"
        )
    return data


def format_report(report: dict[str, Any], described: ScorerDescription) -> str:
    """A readable report: the metrics with their meaning, then each breakdown as a table."""
    from app.cli.display import metric_text

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


def score(
    scorer: str, gold: Path, submission: Path, config: Path | None, as_json: bool, echo: Callable[[str], None]
) -> None:
    """Score ``submission`` against ``gold`` and ``echo`` the report (one JSON line with ``as_json``); bad input
    raises ``Refused``."""
    import gc

    from scorers import OptionsError, ScorerError, get_scorer, unpack_submission
    from scorers.io import gc_paused, release_freed_memory

    options = load_options(config)
    try:
        instance = get_scorer(scorer, options)
        gold_bytes = read_file(gold, "gold file")
        submission_bytes = read_file(submission, "submission")
        dropped = len(gold_bytes) + len(submission_bytes)
        # One pause for all three steps: between separate pauses the collector would walk
        # everything parsed so far (see gc_paused).
        with gc_paused():
            gold_data = instance.parse_gold(gold_bytes)
            del gold_bytes  # the file's bytes are not held while the submission is read: a lower peak
            content = submission_bytes if instance.raw_submission else unpack_submission(submission_bytes)[0]
            del submission_bytes
            parsed = instance.parse_submission(content, instance.public_view(gold_data))
            del content
            release_freed_memory(dropped)  # the files' memory back before the statistics are made: a lower peak
            report = instance.compute_report(gold_data, parsed)
            # The report holds none of the parsed files: they are not held while it is written (a lower peak).
            del gold_data, parsed
            release_freed_memory(dropped)  # and theirs, before the report's text is made
            # The report holds no cycles, but the collector's first pass after the pause would walk all of it
            # (young objects all) while it is written.
            # Frozen objects are left out of every pass; reference counting still frees them.
            gc.freeze()
    except OptionsError as exc:
        raise Refused(f"the options in {config}: {exc.located}" if config else exc.located) from None
    except ScorerError as exc:
        raise Refused(str(exc)) from None
    try:
        if as_json:
            import codecs

            from app.cli.report_json import report_json_parts

            # json.dumps(report, ensure_ascii=False)'s characters, a part at a time where no part can fail to be
            # encoded (else as one text: nothing written when it cannot be)
            parts = report_json_parts(report)
            if codecs.lookup(sys.stdout.encoding or "ascii").name == "utf-8":
                for part in parts:
                    sys.stdout.write(part)
            else:
                sys.stdout.write("".join(parts))
            sys.stdout.write("\n")  # not added to the text: a copy of a large report
        else:
            echo(format_report(report, instance.described()))
    finally:
        gc.unfreeze()  # for callers in the same process (tests): back to the oldest generation, not walked now


# -- the command line without Typer --------------------------------------------------------------------------

#: The options ``podium score`` takes a value for, and the parameter each fills.
_VALUED = {"--scorer": "scorer", "--gold": "gold", "--submission": "submission", "--config": "config"}


def plain_arguments(arguments: Sequence[str]) -> dict[str, Any] | None:
    """The parameters of a plain ``podium score`` command line (the words after ``score``), or None where Typer
    must read it: anything but the four options with a value (``--opt value`` or ``--opt=value``, the last one
    counting, as Click counts it) and ``--json``, a value that is empty or starts with ``-``, a missing option."""
    found: dict[str, Any] = {"config": None, "as_json": False}
    words = iter(arguments)
    for word in words:
        if word == "--json":
            found["as_json"] = True
            continue
        name, equals, value = word.partition("=")
        if name not in _VALUED:
            return None
        if not equals:
            value = next(words, "")
        if not value or value.startswith("-"):
            return None
        found[_VALUED[name]] = value
    if not {"scorer", "gold", "submission"} <= found.keys():
        return None
    for key in ("gold", "submission", "config"):
        if found[key] is not None:
            found[key] = Path(found[key])
    return found


def _echo(message: str, err: bool = False) -> None:
    """What ``typer.echo`` writes for the command's own text: the line, with Click's handling of terminal escapes
    (Click drops them when the stream is not a terminal) only where the text holds one."""
    if "\x1b" in message:
        import click

        click.echo(message, err=err)
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(message + "\n")
    stream.flush()


def quick_score(arguments: Sequence[str]) -> bool:
    """Run a plain ``podium score`` command line without Typer and exit; False where Typer must read it."""
    found = plain_arguments(arguments)
    if found is None:
        return False
    try:
        score(found["scorer"], found["gold"], found["submission"], found["config"], found["as_json"], _echo)
    except Refused as exc:
        _echo(exc.message.rstrip("\n"), err=True)
        sys.exit(EXIT_INPUT)
    sys.exit(0)
