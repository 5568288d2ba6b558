"""Running a CodaLab scoring program: its command, its paths, what it writes, how it fails."""

from __future__ import annotations

import io
import os
import textwrap
import zipfile
from pathlib import Path

import pytest

from codalab.archives import ArchiveProblem, pack_folder, unpack
from codalab.program import (
    TEAM_FAILURE,
    ProgramProblem,
    parse_scores,
    read_command,
    run_program,
    sanitized_html,
    substitute,
)
from sandbox import Limits, server_runtime

LIMITS = Limits(wall_seconds=30, memory_bytes=1024**3, processes=64, output_bytes=16 * 1024**2)


def zipped(files: dict[str, str | bytes], *, folder: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(folder + name, content)
    return buffer.getvalue()


def program(source: str, command: str = "python $program/score.py $input $output", **extra: str) -> bytes:
    return zipped({"metadata": f"command: {command}\n", "score.py": textwrap.dedent(source), **extra})


def test_placeholders() -> None:
    assert (
        substitute("python $program/score.py $input $output") == "python /app/program/score.py /app/input /app/output"
    )
    command = "python3 $ingestion_program/ingestion.py $input $output $ingestion_program $submission_program"
    assert substitute(command).split() == [
        "python3",
        "/app/ingestion_program/ingestion.py",
        "/app/input",
        "/app/output",
        "/app/ingestion_program",
        "/app/ingested_program",
    ]
    assert (
        substitute("cat ${hidden}/x $predictions $shared $tmp")
        == "cat /app/input/ref/x /app/input/res /app/shared /tmp"
    )
    assert substitute("echo $outputs $program_dir") == "echo $outputs $program_dir"  # not placeholders
    assert substitute("python3 /app/program/scoring.py /app/input/ /app/output/") == (
        "python3 /app/program/scoring.py /app/input/ /app/output/"
    )


def test_metadata(tmp_path: Path) -> None:
    (tmp_path / "metadata.yaml").write_text("command: python3 /app/program/run.py\ndescription: x\n")
    assert read_command(tmp_path) == "python3 /app/program/run.py"
    (tmp_path / "metadata.yaml").write_text("description: no command\n")
    with pytest.raises(ProgramProblem, match="has no command"):
        read_command(tmp_path)
    (tmp_path / "metadata.yaml").write_text("command: " + "[" * 100_000)
    with pytest.raises(ProgramProblem, match=r"not readable YAML .*nested deeper than 32 levels"):
        read_command(tmp_path)
    (tmp_path / "metadata.yaml").unlink()
    with pytest.raises(ProgramProblem, match="no metadata file"):
        read_command(tmp_path)


def test_scores_files(tmp_path: Path) -> None:
    (tmp_path / "scores.txt").write_text("accuracy: 0.5\nDuration: 3\nnote: fine\nflag: true\nbad: .nan\n")
    assert parse_scores(tmp_path) == (
        {"accuracy": 0.5, "Duration": 3.0},
        {"note": "not a number", "flag": "not a number", "bad": "nan, not a finite number"},
    )
    (tmp_path / "scores.json").write_text('{"accuracy": 0.75}')
    assert parse_scores(tmp_path) == ({"accuracy": 0.75}, {})  # scores.json is read first
    (tmp_path / "scores.json").write_text("[1, 2]")
    with pytest.raises(ProgramProblem, match="label: value"):
        parse_scores(tmp_path)
    # A link the program made to a file it should not read is not followed.
    outside = tmp_path.parent / "secret.json"
    outside.write_text('{"accuracy": 1}')
    (tmp_path / "scores.json").unlink()
    (tmp_path / "scores.txt").unlink()
    os.symlink(outside, tmp_path / "scores.json")
    with pytest.raises(ProgramProblem, match="neither"):
        parse_scores(tmp_path)


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("scores.json", '{"accuracy": 1' + "0" * 400 + ', "lines": 4}', {"accuracy": "a number too large to store"}),
        ("scores.txt", "accuracy: 1" + "0" * 400 + "\nlines: 4\n", {"accuracy": "a number too large to store"}),
        (
            "scores.json",
            '{"accuracy": 1e999, "lines": -1e999}',
            {"accuracy": "inf, not a finite number", "lines": "-inf, not a finite number"},
        ),
    ],
)
def test_numbers_podium_cannot_store_are_named_never_raised(
    tmp_path: Path, name: str, text: str, problem: dict[str, str]
) -> None:
    (tmp_path / name).write_text(text)
    scores, unusable = parse_scores(tmp_path)
    assert unusable == problem and set(scores) | set(unusable) == {"accuracy", "lines"}


@pytest.mark.parametrize(
    ("name", "text"),
    [("scores.json", '{"accuracy": ' + "[" * 50_000 + "]" * 50_000 + "}"), ("scores.txt", "a: " + "[" * 50_000)],
)
def test_a_scores_file_nested_too_deeply_is_the_programs_problem(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(ProgramProblem, match=f"{name} cannot be read"):
        parse_scores(tmp_path)


def test_detailed_results_are_sanitized(tmp_path: Path) -> None:
    (tmp_path / "detailed_results.html").write_text(
        '<h1>Per class</h1><script>alert(1)</script><img src=x onerror="steal()"><a href="javascript:x()">a</a>'
    )
    html = sanitized_html(tmp_path) or ""
    assert "<h1>Per class</h1>" in html
    assert "script" not in html and "onerror" not in html and "javascript" not in html


def test_unpack_refuses_what_leaves_its_folder(tmp_path: Path) -> None:
    for name in ("../x", "/etc/x", "a/../../x"):
        with pytest.raises(ArchiveProblem, match="leaves its folder"):
            unpack(zipped({name: "x"}), tmp_path / "a", max_bytes=100, max_entries=10)
    with pytest.raises(ArchiveProblem, match="more than 100 bytes"):
        unpack(zipped({"big": "x" * 101}), tmp_path / "b", max_bytes=100, max_entries=10)
    link = zipfile.ZipInfo("link")
    link.external_attr = 0o120777 << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(ArchiveProblem, match="link"):
        unpack(buffer.getvalue(), tmp_path / "c", max_bytes=100, max_entries=10)


def test_folder_round_trip_keeps_executables(tmp_path: Path) -> None:
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "src" / "run.sh").chmod(0o755)
    (tmp_path / "src" / "sub" / "data.txt").write_text("d")
    data = pack_folder(tmp_path / "src", max_bytes=1000)
    assert data == pack_folder(tmp_path / "src", max_bytes=1000)  # the same folder, the same bytes
    unpack(data, tmp_path / "out", max_bytes=1000, max_entries=10)
    assert os.access(tmp_path / "out" / "run.sh", os.X_OK)
    assert (tmp_path / "out" / "sub" / "data.txt").read_text() == "d"


SCORER = """
    import json, os, sys
    ref = open(os.path.join(sys.argv[1], "ref", "truth.txt")).read().split()
    res = open(os.path.join(sys.argv[1], "res", "answer.txt")).read().split()
    right = sum(a == b for a, b in zip(ref, res))
    os.makedirs(sys.argv[2], exist_ok=True)
    open(os.path.join(sys.argv[2], "scores.txt"), "w").write(f"accuracy: {right / len(ref)}\\nright: {right}\\n")
    open(os.path.join(sys.argv[2], "detailed_results.html"), "w").write("<p>ok</p><script>x</script>")
    print("scored", right)
"""


def test_a_program_scores_a_submission() -> None:
    outcome = run_program(
        program(SCORER),
        zipped({"truth.txt": "a b c d"}),
        zipped({"answer.txt": "a b x d"}),
        limits=LIMITS,
        runtime=server_runtime(),
    )
    assert outcome.ok and outcome.scores == {"accuracy": 0.75, "right": 3.0}
    assert outcome.detailed_html == "<p>ok</p>"
    assert outcome.run is not None and outcome.run.stdout == b"scored 3\n"


def test_a_program_zipped_with_its_folder_and_a_codabench_command() -> None:
    source = program(SCORER, command="python3 /app/program/score.py /app/input/ /app/output/")
    inner = zipfile.ZipFile(io.BytesIO(source))
    folder = zipped({name: inner.read(name) for name in inner.namelist()}, folder="scoring_program/")
    outcome = run_program(
        folder, zipped({"truth.txt": "a"}), zipped({"answer.txt": "a"}), limits=LIMITS, runtime=server_runtime()
    )
    assert outcome.ok and outcome.scores["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("source", "limits", "detail"),
    [
        ("import sys; sys.exit(4)", LIMITS, "exited with status 4"),
        ("print('no scores')", LIMITS, "wrote neither scores.json nor scores.txt"),
        ("import time; time.sleep(60)", LIMITS.with_wall(1), "time limit of 1 seconds"),
        (
            "import os, sys; open(os.path.join(sys.argv[2], 'scores.json'), 'w').write('{oops')",
            LIMITS,
            "cannot be read",
        ),
    ],
)
def test_failures_tell_the_team_nothing_and_the_organizers_why(source: str, limits: Limits, detail: str) -> None:
    outcome = run_program(
        program(source),
        zipped({"truth.txt": "a"}),
        zipped({"answer.txt": "a"}),
        limits=limits,
        runtime=server_runtime(),
    )
    assert not outcome.ok and outcome.failure == TEAM_FAILURE
    assert detail in (outcome.detail or "")


def test_how_a_program_fails_never_reaches_the_team_through_the_message() -> None:
    """Two reference data sets, a program whose exit status and stderr depend on them: the same team message."""
    leaky = """
        import os, sys
        gold = open(os.path.join(sys.argv[1], "ref", "truth.txt")).read().strip()
        print("the answer is", gold, file=sys.stderr)
        sys.exit(len(gold))
    """
    outcomes = [
        run_program(
            program(leaky),
            zipped({"truth.txt": gold}),
            zipped({"answer.txt": "?"}),
            limits=LIMITS,
            runtime=server_runtime(),
        )
        for gold in ("yes", "no")
    ]
    assert outcomes[0].failure == outcomes[1].failure == TEAM_FAILURE
    assert outcomes[0].detail != outcomes[1].detail  # the organizers see the difference
    assert outcomes[0].run is not None and b"the answer is yes" in outcomes[0].run.stderr


def test_a_submission_that_is_not_a_zip_is_told_so() -> None:
    outcome = run_program(
        program(SCORER), zipped({"truth.txt": "a"}), b"plain text", limits=LIMITS, runtime=server_runtime()
    )
    assert outcome.run is None and "not a readable zip" in (outcome.failure or "")


def test_a_stored_program_without_metadata_is_the_organizers_problem() -> None:
    with pytest.raises(ProgramProblem, match="no metadata"):
        run_program(
            zipped({"score.py": "print(1)"}), zipped({"t": "a"}), zipped({"a": "a"}), limits=LIMITS, runtime=None
        )


def test_the_work_folder_is_removed(tmp_path: Path) -> None:
    run_program(
        program("import os; os.makedirs('/app/output/locked/deeper'); os.chmod('/app/output/locked', 0)"),
        zipped({"truth.txt": "a"}),
        zipped({"answer.txt": "a"}),
        limits=LIMITS,
        runtime=server_runtime(),
        scratch=tmp_path,
    )
    assert list(tmp_path.iterdir()) == []
