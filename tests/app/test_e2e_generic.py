"""The examples of the generic scorers through a real server (``podium serve`` as its own process): each bundle
put online, two teams' files uploaded with ``podium submit --wait``, and on ``podium leaderboard --json`` the very
numbers ``podium score --config`` gives offline with the bundle's options. A configured variant of two examples
shows that a board's columns, their order, directions and formats, and its ranking come from the options: on the
page, in the API's JSON and in the CSV export.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.app.test_e2e import podium, podium_here, server
from tests.conftest import ROOT

pytestmark = pytest.mark.slow
__all__ = ["server"]  # the fixture, used by name

EXAMPLES = ROOT / "examples"


def rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")), delimiter="\t"))


def trec_runs(bundle: Path) -> tuple[str, str]:
    """A run that ranks each topic's documents by their grade (one topic left out), and one that ranks them the
    other way round."""
    judged: dict[str, dict[str, int]] = {}
    for line in (bundle / "data" / "test-qrels.txt").read_text().splitlines():
        query, _, docno, grade = line.split()
        judged.setdefault(query, {})[docno] = int(grade)
    good, bad = [], []
    for n, (query, grades) in enumerate(judged.items()):
        ordered = sorted(grades, key=lambda d: (-grades[d], d))
        if n != 0:
            good += [f"{query} Q0 {d} {i + 1} {len(ordered) - i}.0 good" for i, d in enumerate(ordered)]
        bad += [f"{query}\tQ0\t{d}\t{i + 1}\t{i + 1}.5E+00\tbad" for i, d in enumerate(ordered)]
    return "\n".join(good) + "\n", "\r\n".join(bad)


def classification_files(bundle: Path) -> tuple[str, str]:
    gold = rows(bundle / "data" / "test.tsv")
    labels = sorted({r["label"] for r in gold})
    good = {r["id"]: r["label"] if i % 5 else labels[(labels.index(r["label"]) + 1) % 3] for i, r in enumerate(gold)}
    bad = "id\tlabel\n" + "".join(f"{r['id']}\tpositive\n" for r in gold)
    return json.dumps(good), bad


def regression_files(bundle: Path) -> tuple[str, str]:
    gold = rows(bundle / "data" / "test.tsv")
    good = "id\tvalue\n" + "".join(f"{r['id']}\t{float(r['value']) + (i % 3 - 1) * 0.4}\n" for i, r in enumerate(gold))
    bad = {r["id"]: 5.0 - float(r["value"]) * (1 + i % 2) / 2 for i, r in enumerate(gold)}
    return good, json.dumps(bad)


MAKERS = {"trec": trec_runs, "classification": classification_files, "regression": regression_files}
#: The configured variants: options that differ from the scorer's defaults in what a board shows.
VARIANTS = {
    "trec": {"measures": ["P_5", "num_rel_ret", "map"], "complete_queries": True},
    "regression": {"format": "tsv", "primary_metric": "rmse"},
}


def variant(tmp_path: Path, name: str) -> Path:
    """The example bundle with other options and slug, in a folder of its own."""
    folder = tmp_path / f"{name}-configured"
    shutil.copytree(EXAMPLES / name, folder)
    document = yaml.safe_load((folder / "competition.yaml").read_text(encoding="utf-8"))
    document["slug"] = f"{name}-configured"
    document["tasks"][0]["scorer_options"] = VARIANTS[name]
    (folder / "competition.yaml").write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return folder


def task_path(bundle: Path) -> tuple[str, dict[str, Any]]:
    document = yaml.safe_load((bundle / "competition.yaml").read_text(encoding="utf-8"))
    task = document["tasks"][0]
    return f"{document['slug']}/{task['slug']}/{task['phases'][0]['slug']}", task


def put_online_and_submit(
    bundle: Path, name: str, tmp_path: Path, url: str, env: dict[str, str], tokens: dict[str, str]
) -> tuple[str, dict[str, dict[str, float]]]:
    """The bundle online, each team's file scored by the server; the offline numbers of each file, by team."""
    created = podium_here("competition", "create", str(bundle), env=env)
    assert created.exit_code == 0, created.stderr
    assert created.stderr == ""  # no warning: every example and variant averages over all queries
    where, task = task_path(bundle)
    config = tmp_path / f"{bundle.name}-options.yaml"
    config.write_text(yaml.safe_dump(task.get("scorer_options", {})))
    offline: dict[str, dict[str, float]] = {}
    for team, text in zip(("ada", "bob"), MAKERS[name](bundle), strict=True):
        upload = tmp_path / f"{bundle.name}-{team}.{'json' if text.startswith('{') else 'txt'}"
        upload.write_text(text)
        args = ("--server", url, "--task", where, "--token", tokens[team], "--wait", "--json", str(upload))
        submitted = podium("submit", *args, env=env)
        assert submitted.returncode == 0, submitted.stderr
        answer = json.loads(submitted.stdout)
        assert answer["status"] == "scored", answer
        gold = bundle / task["phases"][0]["gold"]["path"]
        scored = podium_here(
            "score",
            "--scorer",
            name,
            "--gold",
            str(gold),
            "--submission",
            str(upload),
            "--config",
            str(config),
            "--json",
            env=env,
        )
        assert scored.exit_code == 0, scored.stderr
        offline[team] = json.loads(scored.stdout)["metrics"]
        assert answer["metrics"] == offline[team]
    return where, offline


def test_each_generic_example_scores_on_the_server_as_offline_and_boards_follow_the_options(
    tmp_path: Path, server: tuple[str, dict[str, str]]
) -> None:
    url, env = server
    tokens = {}
    for team in ("ada", "bob"):
        assert podium_here("user", "create", team, env=env, stdin="a long password\n").exit_code == 0
        tokens[team] = podium_here("token", "create", team, env=env).stdout.strip()

    for name in ("trec", "classification", "regression"):
        where, offline = put_online_and_submit(EXAMPLES / name, name, tmp_path, url, env, tokens)
        board = json.loads(podium("leaderboard", "--server", url, "--task", where, "--json", env=env).stdout)
        by_team = {e["team"]: e for e in board["entries"]}
        assert set(by_team) == {"ada", "bob"}
        for team, metrics in offline.items():
            assert by_team[team]["metrics"] == metrics
        # The better file ranks first by the configured primary metric.
        assert [e["team"] for e in board["entries"]] == ["ada", "bob"], (name, offline)

    for name in VARIANTS:
        where, offline = put_online_and_submit(variant(tmp_path, name), name, tmp_path, url, env, tokens)
        competition, task_slug, phase = where.split("/")
        api = httpx.get(
            f"{url}/api/v1/competitions/{competition}/tasks/{task_slug}/phases/{phase}/leaderboard", timeout=120
        ).json()
        page = httpx.get(f"{url}/c/{competition}/{task_slug}/{phase}", timeout=120).text
        exported = httpx.get(f"{url}/c/{competition}/{task_slug}/{phase}/leaderboard.csv", timeout=120).text
        header = next(csv.reader(io.StringIO(exported)))
        # The metrics' headers, in the board's order (the tied-group column stands after the primary one).
        labels = [
            label
            for label in re.findall(r'<th scope="col" class="num[^"]*" title="[^"]*">([^<]+)</th>', page)
            if label != "Tied group"
        ]
        if name == "trec":
            assert api["primary_metric"] == "P_5"
            assert [(m["name"], m["higher_is_better"], m["format"]) for m in api["metrics"]] == [
                ("P_5", True, "percent"),
                ("num_rel_ret", True, "number"),
                ("map", True, "percent"),
            ]
            assert header[5:8] == ["P_5", "num_rel_ret", "map"]  # then the interval's columns
            assert labels[:3] == ["P_5 ↑", "num_rel_ret ↑", "map ↑"]
            # The count is a plain number on the page, the fractions percentages.
            ada = offline["ada"]
            assert f">{ada['num_rel_ret']:.0f}<" in page and f">{ada['P_5'] * 100:.2f}<" in page
        else:
            assert api["primary_metric"] == "rmse"
            assert api["metrics"][0] == {
                "name": "rmse",
                "meaning": "root mean squared error",
                "higher_is_better": False,
                "format": "number",
                "title": "rmse",
                "decimals": None,
            }
            assert header[5] == "rmse" and labels[0] == "rmse ↓"
            # Ranked by the smallest error, whatever the correlations say.
            order = sorted(offline, key=lambda team: offline[team]["rmse"])
            assert [e["team"] for e in api["entries"]] == order
            assert offline[order[0]]["pearson"] != offline[order[1]]["pearson"]
