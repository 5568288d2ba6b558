"""Sandbox benchmark: what one sandboxed run adds to running the same program directly.

Three programs, each run ``--repeat`` times directly (``subprocess.run``, the same interpreter) and in the
sandbox (``sandbox.run`` with the server's environment as runtime), alternating so that both see the
same machine load: ``/bin/true``; a Python program that writes a ``scores.json`` (the shape of a
scoring program, without imports); and the same with numpy imported. The last row is a whole
``codalab.program.run_program`` (unpacking three small zips, running, reading the scores back) against
the direct run of the same program. Medians in milliseconds; "added" is sandboxed minus direct. Target:
under 100 ms added.

    .venv/bin/python bench/sandbox_bench.py [--repeat 30] [--markdown]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(ROOT))

from codalab.program import run_program  # noqa: E402
from sandbox import Bind, Limits, run, server_runtime  # noqa: E402

SCORER = "import json, sys\njson.dump({'accuracy': 0.5}, open(sys.argv[1] + '/scores.json', 'w'))\n"
NUMPY = "import numpy\n" + SCORER
LIMITS = Limits(wall_seconds=60)


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def measure(repeat: int) -> list[tuple[str, float, float]]:
    rows = []
    runtime = server_runtime()
    python = str(runtime.bin / "python3")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "program").mkdir()
        (work / "logs").mkdir()
        (work / "out").mkdir()
        cases = {
            "/bin/true": (["/bin/true"], ["/bin/true"]),
            "python, writes scores.json": (
                [python, str(work / "program" / "score.py"), str(work / "out")],
                ["python3", "/app/program/score.py", "/app/output"],
            ),
            "python + numpy, writes scores.json": (
                [python, str(work / "program" / "numpy_score.py"), str(work / "out")],
                ["python3", "/app/program/numpy_score.py", "/app/output"],
            ),
        }
        (work / "program" / "score.py").write_text(SCORER)
        (work / "program" / "numpy_score.py").write_text(NUMPY)
        binds = [Bind(work / "program", "/app/program"), Bind(work / "out", "/app/output", writable=True)]
        for name, (direct, inside) in cases.items():
            plain, boxed = [], []
            for _ in range(repeat):
                plain.append(_timed(lambda d=direct: subprocess.run(d, check=True)))  # type: ignore[misc]
                boxed.append(
                    _timed(
                        lambda i=inside: run(  # type: ignore[misc]
                            i, binds, cwd="/app/program", logs=work / "logs", limits=LIMITS, runtime=runtime
                        )
                    )
                )
            rows.append((name, statistics.median(plain), statistics.median(boxed)))
        program = _zip({"metadata": "command: python3 $program/score.py $output\n", "score.py": SCORER})
        reference, result = _zip({"truth.txt": "a"}), _zip({"answer.txt": "a"})
        direct = [python, str(work / "program" / "score.py"), str(work / "out")]
        plain, boxed = [], []
        for _ in range(repeat):
            plain.append(_timed(lambda: subprocess.run(direct, check=True)))
            boxed.append(_timed(lambda: run_program(program, reference, result, limits=LIMITS, runtime=runtime)))
        rows.append(
            ("whole run_program (unpack, run, read scores)", statistics.median(plain), statistics.median(boxed))
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()
    rows = measure(options.repeat)
    print(f"# {options.repeat} runs each, medians; {os.cpu_count()} cores; uid {os.geteuid()}")
    header = ("program", "direct ms", "sandboxed ms", "added ms")
    if options.markdown:
        print("| " + " | ".join(header) + " |\n|---|---:|---:|---:|")
    else:
        print(f"{header[0]:<48}{header[1]:>12}{header[2]:>14}{header[3]:>10}")
    for name, plain, boxed in rows:
        if options.markdown:
            print(f"| {name} | {plain:.1f} | {boxed:.1f} | {boxed - plain:.1f} |")
        else:
            print(f"{name:<48}{plain:>12.1f}{boxed:>14.1f}{boxed - plain:>10.1f}")


if __name__ == "__main__":
    main()
