"""The commands that need no server: ``podium scorers`` (the registry, as organizers read it) and the refusals
of ``podium score --config``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner, Result

from app.cli import app
from scorers import all_scorers, scorer_class


def podium(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def blocks(text: str) -> dict[str, list[str]]:
    """The listing's blocks, by scorer name (the first word of each block's first line)."""
    out: dict[str, list[str]] = {}
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        out[lines[0].split(" ", 1)[0]] = lines
    return out


def test_podium_scorers_lists_every_scorer_with_its_formats_metrics_options_and_defaults() -> None:
    listed = podium("scorers")
    assert listed.exit_code == 0, listed.stderr
    by_name = blocks(listed.stdout)
    assert set(by_name) == {cls.name for cls in all_scorers()}
    for cls in all_scorers():
        lines = by_name[cls.name]
        assert lines[0] == f"{cls.name} (version {cls.version}): {cls.title}"
        assert f"  gold: {cls.gold_format}" in lines
        assert f"  submission: {cls.submission_format}" in lines
        for option in cls.options:
            assert f"    {option.name} (default {json.dumps(option.default)}): {option.meaning}" in lines
    trec = by_name["trec"]
    assert "  primary metric: map (higher is better)" in trec
    assert "    map (percent, higher is better): trec_eval map, mean over queries" in trec
    assert (
        '    measures (default ["map", "P_10", "ndcg_cut_10", "recip_rank"]): '
        + scorer_class("trec").options[0].meaning
        in trec
    )
    assert "    complete_queries (default false): " in "\n".join(trec)
    regression = by_name["regression"]
    assert "    rmse (number, lower is better): root mean squared error" in regression
    assert "    higher_is_better (default null): " in "\n".join(regression)


def test_podium_scorers_json_is_each_description() -> None:
    listed = podium("scorers", "--json")
    assert listed.exit_code == 0, listed.stderr
    described = json.loads(listed.stdout)["scorers"]
    assert described == [json.loads(json.dumps(cls.describe().to_dict())) for cls in all_scorers()]
    classification = next(d for d in described if d["name"] == "classification")
    options = {o["name"]: o["default"] for o in classification["options"]}
    assert options["average"] == "macro" and options["group_by"] == [] and options["labels"] is None


def test_podium_score_refuses_a_bad_option_of_its_config_by_key(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 r\n")
    config = tmp_path / "options.yaml"
    config.write_text("measures: [map, P_10, mapp]\n")
    args = [
        "score",
        "--scorer",
        "trec",
        "--gold",
        str(tmp_path / "qrels.txt"),
        "--submission",
        str(tmp_path / "run.txt"),
    ]
    refused = podium(*args, "--config", str(config))
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"the options in {config}: measures[2]: unknown trec_eval measure 'mapp'")
    config.write_text("measures: " + "[" * 100_000)  # one line and exit 2, never a RecursionError
    deep = podium(*args, "--config", str(config))
    assert deep.exit_code == 2 and "Traceback" not in deep.stderr
    assert deep.stderr.startswith(f"the config file {config} is neither JSON nor YAML: measures")
    assert "nested deeper than 32 levels" in deep.stderr
    config.write_text("measures: [P_5, num_rel_ret]\ncomplete_queries: true\n")
    scored = podium(*args, "--config", str(config), "--json")
    assert scored.exit_code == 0, scored.stderr
    assert json.loads(scored.stdout)["metrics"] == {"P_5": 0.2, "num_rel_ret": 1.0}
    text = podium(*args, "--config", str(config))
    assert text.exit_code == 0, text.stderr
    lines = text.stdout.splitlines()
    # The primary metric marked, a fraction in percent, a count as a plain number.
    [p5] = [line for line in lines if line.startswith("* P_5 ")]
    [count] = [line for line in lines if line.startswith("  num_rel_ret ")]
    assert p5.split() == ["*", "P_5", "20.00", "%", "trec_eval", "P_5,", "mean", "over", "queries"]
    assert "%" not in count and float(count.split()[1]) == 1.0
