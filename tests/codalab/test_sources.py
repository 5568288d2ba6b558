"""Checking a program's sources at import: errors and warnings said once each, nothing printed, bounded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from codalab.sources import MAX_FILES, compile_warnings
from tests.conftest import ROOT

FLOOD = """
import json, sys
from pathlib import Path
from codalab.bundle import compile_warnings
print(json.dumps(compile_warnings(Path(sys.argv[1]), "program")))
"""


def test_a_source_with_a_hundred_thousand_warnings_is_one_line_and_no_log(tmp_path: Path) -> None:
    (tmp_path / "score.py").write_text("x = 1\n" + "x is 1\n" * 100_000)
    (tmp_path / "tabs.py").write_text("if True:\n\tx = 1\n        y = 2\n")
    # As the server runs it: Python's default warning filters, which print each new warning to stderr.
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", FLOOD, str(tmp_path)],
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    assert len(done.stderr) < 1000, done.stderr[:500]
    warned = json.loads(done.stdout)
    assert len(warned) == 2, warned
    assert warned[0].startswith("program/score.py: Python warns 100000 times when compiling it (first, line 2: ")
    assert "SyntaxWarning" in warned[0] and '"is" with a literal' in warned[0]
    assert warned[1].startswith("program/tabs.py, line 3: ") and "TabError" in warned[1]


def test_only_so_many_files_are_compiled(tmp_path: Path) -> None:
    for number in range(MAX_FILES + 5):
        (tmp_path / f"m{number:04d}.py").write_text("x = '\\d'\n")  # an invalid escape: one warning each
    warned = compile_warnings(tmp_path, "program")
    assert len(warned) == MAX_FILES + 1
    assert warned[-1] == f"program: only the first {MAX_FILES} Python files were checked for errors"
    assert all("warns once" in line for line in warned[:-1])
