"""The server-side commands, run in-process on the test database."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner, Result

from app.cli import app
from app.config import Settings
from app.main import create_app
from app.services.accounts import users
from app.services.boards.snapshot import compute_snapshot
from app.services.competitions import catalog, demo
from app.storage.db import Database
from app.storage.models import ApiToken, BaselineRun, Competition, CompetitionOrganizer
from tests.app.web.browser import podium_command
from tests.conftest import ROOT


def run(db: Database, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=stdin, env={"PODIUM_DATABASE_URL": db.url})


def test_user_create_reads_the_password_from_stdin(db: Database) -> None:
    created = run(db, "user", "create", "olga", "--organizer", stdin="a long password\n")
    assert (created.exit_code, created.stdout) == (0, "created user olga (organizer)\n")
    with db.session() as session:
        olga = users.authenticate(session, "olga", "a long password")
        assert olga.is_organizer and not olga.is_admin
    again = run(db, "user", "create", "OLGA", stdin="a long password\n")
    assert (again.exit_code, again.stderr) == (2, "the user name 'OLGA' is taken\n")
    short = run(db, "user", "create", "ada", stdin="short\n")
    assert short.exit_code == 2
    assert "password: must be 8 to 1024 characters" in short.stderr


def test_token_create_prints_only_the_token(db: Database) -> None:
    run(db, "user", "create", "ada", stdin="a long password\n")
    printed = run(db, "token", "create", "ada")
    assert printed.exit_code == 0
    token = printed.stdout.strip()
    assert re.fullmatch(r"pod_[A-Za-z0-9_-]{43}", token)
    with db.session() as session:
        assert users.user_for_token(session, token).name == "ada"
    assert run(db, "token", "create", "nobody").stderr == "there is no user named 'nobody'\n"


def test_competition_create_from_a_bundle_folder(db: Database) -> None:
    created = run(db, "competition", "create", str(ROOT / "examples" / "svident"))
    assert created.exit_code == 0, created.stderr
    assert created.stdout == "created competition svident: 2 task(s), 2 phase(s)\n"
    again = run(db, "competition", "create", str(ROOT / "examples" / "svident" / "competition.yaml"))
    assert (again.exit_code, again.stderr) == (2, "a competition with the slug 'svident' exists already\n")


def test_a_bad_bundle_is_refused_with_key_paths(db: Database, tmp_path: Path) -> None:
    (tmp_path / "competition.yaml").write_text(
        "slug: x\ntitle: X\ntasks:\n  - {slug: t, title: T, scorer: svident-detection, "
        "phases: [{slug: p, title: P, gold: {path: missing.tsv}}]}\n"
    )
    refused = run(db, "competition", "create", str(tmp_path))
    assert refused.exit_code == 2
    assert "tasks[0].phases[0].gold" in refused.stderr
    with db.session() as session:
        assert session.scalar(select(Competition)) is None


def _accounts_as_stored(db: Database) -> dict[str, tuple[str, list[str], bool]]:
    """Each demo account's password hash, its tokens' hashes and whether it organizes."""
    with db.session() as session:
        found = {}
        for name in ("demo-organizer", "demo-participant"):
            user = users.find_user(session, name)
            assert user is not None
            hashes = session.scalars(select(ApiToken.token_hash).where(ApiToken.user_id == user.id))
            found[name] = (user.password_hash, sorted(hashes), user.is_organizer)
        return found


def test_demo_is_idempotent_and_never_changes_existing_accounts(db: Database) -> None:
    first = run(db, "demo")
    assert first.exit_code == 0, first.stderr
    accounts = re.findall(r"user (\S+) +password (\S+) +token (\S+)", first.stdout)
    assert [name for name, _, _ in accounts] == ["demo-organizer", "demo-participant"]
    stored = _accounts_as_stored(db)
    second = run(db, "demo")
    assert second.exit_code == 0, second.stderr
    slugs = re.findall(r"^  (\S+) +(created|already there)$", second.stdout, re.MULTILINE)
    generic = ("trec-example", "classification-example", "regression-example")
    code = demo.CODE if demo.programs_can_run() else ()
    expected = ("svident", "scier", "famus", *generic, "private-demo", *code)
    assert slugs == [(s, "already there") for s in expected]
    # The second run changes no password and no token, prints none, and says how to get new ones.
    assert _accounts_as_stored(db) == stored
    assert re.findall(r"user (\S+) +already there$", second.stdout, re.MULTILINE) == [
        "demo-organizer",
        "demo-participant",
    ]
    assert "password " not in second.stdout.split("Demo accounts")[1].replace("a new password", "")
    assert "podium user reset-link NAME" in second.stdout
    with db.session() as session:
        for name, password, token in accounts:  # the credentials of the first run still work
            assert users.authenticate(session, name, password).name == name
            assert users.user_for_token(session, token).name == name
        assert len(session.scalars(select(Competition)).all()) == len(expected)
        assert len(session.scalars(select(CompetitionOrganizer)).all()) == len(expected)
        trec = session.scalar(select(Competition).where(Competition.slug == "trec-example"))
        assert trec is not None and [task.scorer for task in trec.tasks] == ["trec"]


@pytest.mark.skipif(not demo.programs_can_run(), reason="bubblewrap (bwrap) is not installed here")
def test_demo_shows_a_code_phase_where_programs_can_run_and_says_why_it_left_it_out_elsewhere(db: Database) -> None:
    done = run(db, "demo", "--no-baselines")
    assert done.exit_code == 0, done.stderr
    assert re.search(r"^  svident-code +created$", done.stdout, re.MULTILINE), done.stdout
    with db.session() as session:
        code = session.scalar(select(Competition).where(Competition.slug == "svident-code"))
        assert code is not None and [phase.code is not None for phase in code.tasks[0].phases] == [True]
    with db.session() as session:  # a host without bubblewrap: left out, with one line saying why
        report = demo.seed(session, ROOT / "examples", None, programs=False)
        assert "svident-code" not in [slug for slug, _ in report.competitions]
        assert report.notes == ["svident-code left out: bubblewrap (bwrap) is not installed, so programs cannot run"]


def test_demo_runs_the_fast_hosted_baselines_once_so_the_boards_have_baseline_rows(db: Database) -> None:
    skipped = run(db, "demo", "--no-baselines")
    assert skipped.exit_code == 0 and "Hosted baselines" not in skipped.stdout
    with db.session() as session:
        assert session.scalar(select(BaselineRun)) is None
    first = run(db, "demo")
    assert first.exit_code == 0, first.stderr
    ran = re.findall(r"^  (\S+/\S+/\S+) +(\S+) +(\S+)$", first.stdout, re.MULTILINE)
    expected = {
        ("svident/detection/test", "svident-tfidf-lr"),
        ("svident/disambiguation/test", "svident-bm25"),
        ("scier/ere/dev", "scier-gazetteer"),
        ("famus/sv/test", "famus-sv-lemma"),
        ("famus/cdae-source/test", "famus-cdae-report"),  # the one task with the report gold as a resource
    }
    assert expected <= {(phase, system) for phase, system, _ in ran}
    assert {status for _, _, status in ran} == {"succeeded"}
    assert not [system for _, system, _ in ran if "minilm" in system]  # the GPU ones need torch: not here
    # Every run's log ends with a closing line saying how it ended (BM25's used to stop at "indexing ...").
    closing = re.compile(
        r"\d\d:\d\d:\d\d finished in \d+\.\d s: (\d+ of \d+ units done, )?wrote \d+ bytes; "
        r"submission \d+ queued for scoring"
    )
    with db.session() as session:
        logs = {row.baseline: row.log_tail for row in session.scalars(select(BaselineRun))}
    assert logs and all(closing.fullmatch(log.splitlines()[-1]) for log in logs.values()), logs
    assert re.search(r"indexing \d+ variables\n.*finished in", logs["svident-bm25"])
    with db.session() as session:
        snapshot = compute_snapshot(session, catalog.get_phase(session, "svident", "detection", "test"), "public", 0)
        (entry,) = snapshot.entries
        assert entry.candidate.baseline and entry.candidate.team == "svident-tfidf-lr"
    again = run(db, "demo")
    assert again.exit_code == 0 and "Hosted baselines" not in again.stdout  # once per phase


def test_make_serve_queues_the_demo_baselines_and_the_server_runs_them(db: Database, tmp_path: Path) -> None:
    queued = run(db, "demo", "--no-wait")
    assert queued.exit_code == 0, queued.stderr
    assert re.search(r"^Hosted baselines: \d+ runs queued; `podium serve` runs them\.$", queued.stdout, re.MULTILINE)
    with db.session() as session:
        assert {r.status for r in session.scalars(select(BaselineRun))} == {"queued"}
    settings = Settings(database_url=db.url, workers=1, data_dir=tmp_path)
    with TestClient(create_app(settings)) as client:  # the server's pool takes the waiting runs on start
        assert client.app.state.podium.queue.wait_idle(300)  # type: ignore[attr-defined]
        board = client.get("/api/v1/competitions/famus/tasks/sv/phases/test/leaderboard").json()
    assert [(e["team"], e["baseline"]) for e in board["entries"]] == [("famus-sv-lemma", True)]


def test_db_upgrade_reports_the_revision(db: Database) -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(Config(str(ROOT / "alembic.ini"))).get_current_head()
    upgraded = run(db, "db", "upgrade")
    assert (upgraded.exit_code, upgraded.stdout) == (0, f"the database is at revision {head}\n")


def test_client_commands_check_their_arguments(db: Database, tmp_path: Path) -> None:
    run_file = tmp_path / "run.json"
    run_file.write_text("{}")
    bad_task = run(db, "submit", "--server", "http://127.0.0.1:9", "--token", "t", "--task", "a/b", str(run_file))
    assert bad_task.exit_code == 2
    assert "--task must be COMPETITION/TASK/PHASE" in bad_task.stderr
    unreachable = run(db, "leaderboard", "--server", "http://127.0.0.1:9", "--task", "a/b/c")
    assert unreachable.exit_code == 2
    assert "cannot reach the server" in unreachable.stderr


def test_a_bad_setting_is_named(db: Database) -> None:
    refused = CliRunner().invoke(app, ["db", "upgrade"], env={"PODIUM_DATABASE_URL": db.url, "PODIUM_WORKERS": "x"})
    assert refused.exit_code == 2
    assert refused.stderr.startswith("bad setting: PODIUM_WORKERS:")


def test_the_command_loads_no_database_or_web_framework_until_a_command_needs_them() -> None:
    # ``podium score`` and the client commands start quickly: the heavy imports are inside the commands.
    probe = "import sys, app.cli; print(sorted(m for m in ('sqlalchemy', 'fastapi', 'celery') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert loaded.stdout.strip() == "[]"


#: What ``podium score`` of a pure-Python scorer must not load: the server and libraries it does not use.
HEAVY_MODULES = ("sqlalchemy", "fastapi", "starlette", "celery", "pydantic", "app.web", "app.services")
HEAVY_MODULES += ("app.storage.db", "numpy", "scipy", "sklearn", "pytrec_eval_ext", "yaml")


def score_loading(scorer: str, gold: Path, submission: Path) -> tuple[str, str]:
    """``podium score --json`` in a fresh process: its output and which of ``HEAVY_MODULES`` it loaded."""
    probe = (
        "import sys\n"
        "from app.cli import app\n"
        f"args = ['score', '--scorer', {scorer!r}, '--gold', {str(gold)!r}, '--submission', {str(submission)!r}]\n"
        "try:\n"
        "    app(args + ['--json'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, None), exc.code\n"
        f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("scorer", "gold", "submission", "f1"),
    [
        # FAMuS source validation is pure Python, so not even numpy.
        (
            "famus-sv",
            '{"instance_id": "a", "valid_source": true}\n{"instance_id": "b", "valid_source": false}\n',
            '{"a": 1, "b": 1}',
            '"f1": 0.6666666666666666',
        ),
        # SV-Ident Task 1 counts its per-document F1 in plain Python: numpy is not needed either.
        (
            "svident-detection",
            "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
            "s\t1\tv1\t\td1\tu1\ten\ns\t0\t\t\td1\tu2\ten\n",
            '{"u1": "1", "u2": "1"}',
            '"f1": 0.3333333333333333',
        ),
    ],
)
def test_podium_score_imports_only_what_its_scorer_needs(
    tmp_path: Path, scorer: str, gold: str, submission: str, f1: str
) -> None:
    # `podium score` on a laptop starts in a fraction of a second because it loads neither the server
    # (web framework, database, queues, settings) nor libraries its scorer does not use.
    gold_file = tmp_path / ("gold.tsv" if scorer.startswith("svident") else "gold.jsonl")
    gold_file.write_text(gold)
    submission_file = tmp_path / "submission.json"
    submission_file.write_text(submission)
    output, loaded = score_loading(scorer, gold_file, submission_file)
    assert f1 in output
    assert loaded == "[]"


def test_a_bad_scorer_option_is_refused_by_key_path_and_a_risky_one_warned_of(db: Database, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    bundle = tmp_path / "competition.yaml"
    text = (
        "slug: ranked\ntitle: Ranked\ntasks:\n  - {slug: t, title: T, scorer: trec, scorer_options: OPTIONS, "
        "phases: [{slug: p, title: P, gold: {path: qrels.txt}}]}\n"
    )
    bundle.write_text(text.replace("OPTIONS", "{measures: [map, P_10, mapp], complete_queries: true}"))
    refused = run(db, "competition", "create", str(bundle))
    assert refused.exit_code == 2
    assert "- tasks[0].scorer_options.measures[2]: unknown trec_eval measure 'mapp'" in refused.stderr
    assert "Traceback" not in refused.stderr
    bundle.write_text(text.replace("OPTIONS", "{measures: [map, P_10]}"))
    warned = run(db, "competition", "create", str(bundle))
    assert warned.exit_code == 0, warned.stderr
    assert warned.stdout == "created competition ranked: 1 task(s), 1 phase(s)\n"
    assert warned.stderr.startswith("warning: tasks[0].scorer_options.complete_queries: neither complete_queries")
    assert "leave out its hardest queries" in warned.stderr


def test_podium_score_shows_fractions_in_percent_and_other_numbers_as_they_are(tmp_path: Path) -> None:
    gold = ROOT / "examples" / "regression" / "data" / "test.tsv"
    shown = CliRunner().invoke(app, ["score", "--scorer", "regression", "--gold", str(gold), "--submission", str(gold)])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    # A correlation is a number, written as the pages write it (1.0 is "1").
    assert any(line.split()[:3] == ["*", "pearson", "1"] for line in lines)
    assert any(line.split()[:2] == ["mae", "0"] for line in lines)
    sv_gold = tmp_path / "gold.jsonl"
    sv_gold.write_text('{"instance_id": "a", "valid_source": true}\n{"instance_id": "b", "valid_source": false}\n')
    submission = tmp_path / "submission.json"
    submission.write_text('{"a": 1, "b": 1}')
    shown = CliRunner().invoke(
        app, ["score", "--scorer", "famus-sv", "--gold", str(sv_gold), "--submission", str(submission)]
    )
    assert [line.split()[:3] for line in shown.stdout.splitlines()[2:6]] == [
        ["accuracy", "50.00", "%"],
        ["precision", "50.00", "%"],
        ["recall", "100.00", "%"],
        ["*", "f1", "66.67"],
    ]


def test_serve_on_a_port_in_use_says_so_and_exits_2_before_anything_else(tmp_path: Path) -> None:
    """`make serve` checks the port first (`podium serve --check-port`): a busy port stops everything with
    one line, before `podium demo` or the database; `podium serve` itself says the same, no traceback."""
    database = tmp_path / "podium.sqlite3"
    env = {**os.environ, "PODIUM_DATABASE_URL": f"sqlite:///{database}"}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for extra in ([], ["--check-port"]):
            answer = subprocess.run(
                [*podium_command(), "serve", "--host", "127.0.0.1", "--port", str(port), *extra],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert answer.returncode == 2, answer
            assert answer.stderr.strip() == (
                f"port {port} on 127.0.0.1 is in use; choose another with `make serve PORT={port + 1}` "
                f"(or `podium serve --port {port + 1}`)"
            )
            assert answer.stdout == "" and "Traceback" not in answer.stderr
            assert not database.exists(), "nothing was set up"
    free = subprocess.run(
        [*podium_command(), "serve", "--check-port", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (free.returncode, free.stdout, free.stderr) == (0, "", "")
    assert not database.exists()
    # `make serve` and `make serve-full` check the port before `podium demo` changes anything.
    for target in ("serve", "serve-full"):
        steps = subprocess.run(
            ["make", "-n", target, "VENV=/nonexistent/venv", "PORT=8001"], cwd=ROOT, capture_output=True, text=True
        ).stdout.splitlines()
        check = steps.index("/nonexistent/venv/bin/podium serve --check-port --host 127.0.0.1 --port 8001")
        demo = next(i for i, line in enumerate(steps) if line.startswith("/nonexistent/venv/bin/podium demo"))
        assert check < demo, steps
