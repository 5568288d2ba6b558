"""Every case in ../shared/conformance, through the ``podium score`` command.

Valid cases must reproduce the official numbers to 1e-9; ``invalid/`` cases must be refused with
exit code 2 and a message, never scored. The cases are discovered from the folder, so new ones are
picked up without code changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from tests.conftest import shared_dir

CONFORMANCE = shared_dir() / "conformance"
TOLERANCE = 1e-9


def _cases(invalid: bool) -> list[Path]:
    if not CONFORMANCE.is_dir():
        return []
    base = CONFORMANCE / "invalid" if invalid else CONFORMANCE
    found = []
    for scorer_dir in sorted(p for p in base.iterdir() if p.is_dir() and p.name != "invalid"):
        found.extend(sorted(p for p in scorer_dir.iterdir() if (p / "expected.json").is_file()))
    return found


def _one(case: Path, stem: str) -> Path:
    (path,) = [p for p in case.iterdir() if p.stem == stem]
    return path


def _run(case: Path) -> tuple[int, str, str]:
    args = [
        "score",
        "--scorer",
        case.parent.name,
        "--gold",
        str(_one(case, "gold")),
        "--submission",
        str(_one(case, "submission")),
        "--json",
    ]
    if (case / "config.json").is_file():
        args += ["--config", str(case / "config.json")]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


skip_without_shared = pytest.mark.skipif(
    not CONFORMANCE.is_dir(), reason=f"conformance cases not found at {CONFORMANCE} (set PODIUM_SHARED_DIR)"
)


@skip_without_shared
def test_cases_are_found() -> None:
    assert len(_cases(False)) >= 50
    assert len(_cases(True)) >= 40


VALID = _cases(False)
INVALID = _cases(True)


@skip_without_shared
@pytest.mark.parametrize("case", VALID, ids=_ids(VALID))
def test_valid_case_reproduces_official_numbers(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())["metrics"]
    code, out, err = _run(case)
    assert code == 0, err
    report = json.loads(out)
    assert report["scorer"] == case.parent.name
    for name, value in expected.items():
        assert report["metrics"][name] == pytest.approx(value, abs=TOLERANCE, rel=0), name
    assert set(report["metrics"]) == set(expected)


@skip_without_shared
@pytest.mark.parametrize("case", INVALID, ids=_ids(INVALID))
def test_invalid_case_is_refused(case: Path) -> None:
    code, out, err = _run(case)
    assert code == 2, out
    assert out == ""
    assert "refused" in err
    assert "Traceback" not in err
