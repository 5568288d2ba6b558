"""``podium score`` from the console entry point reads a plain command line without Typer (start-up) and prints
what the Typer command prints: the same stdout, stderr and exit code, for reports and for every refusal; any other
command line goes to Typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.scoring import plain_arguments
from tests.conftest import podium_probe

ROOT = Path(__file__).resolve().parents[2]

#: Runs ``main()`` as the ``podium`` script does, then says on stderr whether Typer or Click was imported.
ENTRY = podium_probe("'typer loaded' if 'typer' in sys.modules or 'click' in sys.modules else 'no typer'")
#: The Typer application, as the tests and anything importing ``app.cli.app`` run it.
TYPER = "import sys\nfrom app.cli import app\napp(sys.argv[1:], prog_name='podium')\n"


def _run(program: str, args: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )
    return done.returncode, done.stdout, done.stderr


def both(args: list[str]) -> tuple[tuple[int, str, str], bool]:
    """The entry point's (code, stdout, stderr) after checking it equals Typer's, and whether it loaded Typer."""
    code, out, err = _run(ENTRY, args)
    *lines, marker = err.splitlines(keepends=True)
    assert _run(TYPER, args) == (code, out, "".join(lines))
    return (code, out, "".join(lines)), marker.strip() == "typer loaded"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"instance_id": "a", "valid_source": true}\n{"instance_id": "b", "valid_source": false}\n')
    good = tmp_path / "good.json"
    good.write_text('{"a": 1, "b": 1}')
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1, "a": 0, "b": 2}')
    config = tmp_path / "config.yaml"
    config.write_text("no_such_option: 1\n")
    return {"gold": gold, "good": good, "bad": bad, "config": config, "folder": tmp_path}


def test_a_report_is_printed_without_typer_exactly_as_typer_prints_it(files: dict[str, Path]) -> None:
    args = ["score", "--scorer", "famus-sv", "--gold", str(files["gold"]), "--submission", str(files["good"])]
    (code, out, err), typer_loaded = both([*args, "--json"])
    assert (code, err, typer_loaded) == (0, "", False)
    assert '"f1": 0.6666666666666666' in out
    # --opt=value, --json first, and the human-readable report.
    (code, out, _), typer_loaded = both(["score", "--json", "--scorer=famus-sv", *args[3:]])
    assert code == 0 and not typer_loaded and '"f1": 0.6666666666666666' in out
    (code, out, _), typer_loaded = both(args)
    assert code == 0 and not typer_loaded
    assert out.startswith("famus-sv (version ") and "* f1" in out


def test_every_refusal_has_typer_s_words_and_exit_code(files: dict[str, Path]) -> None:
    gold, good = str(files["gold"]), str(files["good"])
    cases = {
        "a repeated key": ["--scorer", "famus-sv", "--gold", gold, "--submission", str(files["bad"])],
        "an unknown scorer": ["--scorer", "famus-svv", "--gold", gold, "--submission", good],
        "a missing file": ["--scorer", "famus-sv", "--gold", gold, "--submission", good + ".missing"],
        "a folder": ["--scorer", "famus-sv", "--gold", str(files["folder"]), "--submission", good],
        "a bad option": [
            "--scorer",
            "famus-sv",
            "--gold",
            gold,
            "--submission",
            good,
            "--config",
            str(files["config"]),
        ],
    }
    for why, args in cases.items():
        (code, out, err), typer_loaded = both(["score", *args, "--json"])
        assert code == 2, why
        assert out == "", why
        assert err.count("\n") >= 1 and "Traceback" not in err, why
        assert not typer_loaded, why
    (_, _, err), _ = both(["score", *cases["a repeated key"]])
    assert "- key 'a' appears more than once in one object" in err


@pytest.mark.parametrize(
    "args",
    [
        ["score", "--help"],
        ["score", "--scorer", "famus-sv", "--gold", "g"],
        ["score", "--scorer", "famus-sv", "--gold", "g", "--submission", "-"],
        ["score", "--scorer", "famus-sv", "--gold", "g", "--submission", "s", "--jsn"],
        ["score", "--scorer", "famus-sv", "--gold", "g", "--submission"],
        ["score", "--json=1", "--scorer", "famus-sv", "--gold", "g", "--submission", "s"],
    ],
)
def test_any_other_command_line_goes_to_typer(args: list[str]) -> None:
    assert plain_arguments(args[1:]) is None
    (code, _, _), typer_loaded = both(args)
    assert typer_loaded
    assert code == (0 if "--help" in args else 2)


def test_plain_arguments_reads_what_click_reads() -> None:
    assert plain_arguments(["--scorer", "a", "--scorer=b", "--gold", "g", "--submission", "s", "--json"]) == {
        "scorer": "b",
        "gold": Path("g"),
        "submission": Path("s"),
        "config": None,
        "as_json": True,
    }
    assert plain_arguments(["--scorer", "a", "--gold", "g", "--submission", "s", "--config", "c"]) == {
        "scorer": "a",
        "gold": Path("g"),
        "submission": Path("s"),
        "config": Path("c"),
        "as_json": False,
    }
    assert plain_arguments(["--scorer=", "--gold", "g", "--submission", "s"]) is None
