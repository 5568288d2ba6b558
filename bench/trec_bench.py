"""``trec`` against its peers on the same files: a bare pytrec_eval script and, where a build is at hand, C trec_eval.

The inputs are the score bench's (``bench/trec_inputs.py``: 1,000 queries of 1,000 ranked documents at 1x, scores
with two decimals so that ties occur, 100 judgements per query; 10x is 10,000 queries). In every round three whole
processes run back to back, so that they share the machine's load: the bare script below (pytrec_eval's own
readers and evaluator, the same four measures, no checks), ``podium score --scorer trec --json`` (every check of
the format kept), and C trec_eval (``trec_eval -m map -m P.10 -m ndcg_cut.10 -m recip_rank``) if one is found: on
the ``PATH``, or built from sources in ``$PODIUM_SHARED_DIR/reference/trec_eval`` (a folder with a Makefile);
otherwise its column says why it is missing. Medians of wall and CPU times (``os.wait4``) and of peaks, and the
medians of the per-round ratios; the bare script's and Podium's numbers are compared (they must agree to 1e-12).
``PODIUM_TREC_EVAL`` names a trec_eval binary to run before any other is looked for.

    .venv/bin/python bench/trec_bench.py [--scales 1,10] [--rounds 3] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench.score_bench import shared_dir  # noqa: E402
from bench.score_inputs import build_inputs  # noqa: E402

MEASURES = ("map", "P_10", "ndcg_cut_10", "recip_rank")
#: The bare script: pytrec_eval's readers and evaluator, averaged as trec_eval averages these measures.
BARE = """
import json, sys, pytrec_eval
qrels = pytrec_eval.parse_qrel(open(sys.argv[1]))
run = pytrec_eval.parse_run(open(sys.argv[2]))
values = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P.10", "ndcg_cut.10", "recip_rank"}).evaluate(run)
names = ("map", "P_10", "ndcg_cut_10", "recip_rank")
print(json.dumps({m: sum(v[m] for v in values.values()) / len(values) for m in names}))
"""


def c_trec_eval(work: Path) -> tuple[str | None, str]:
    """A C trec_eval to run, or None and why there is none."""
    given = os.environ.get("PODIUM_TREC_EVAL")
    if given:
        if not os.access(given, os.X_OK):
            return None, f"PODIUM_TREC_EVAL names {given}, which is not an executable file"
        return given, f"PODIUM_TREC_EVAL ({given})"
    found = shutil.which("trec_eval")
    if found:
        return found, f"trec_eval on the PATH ({found})"
    sources = shared_dir() / "reference" / "trec_eval"
    if not (sources / "Makefile").is_file():
        return None, (
            f"no PODIUM_TREC_EVAL, no trec_eval on the PATH and no sources to build at {sources} (it holds test "
            "files only; pytrec-eval-terrier's source distribution ships none: it fetches trec_eval's sources from "
            "GitHub when it is built)"
        )
    build = work / "trec_eval-build"
    shutil.copytree(sources, build)
    done = subprocess.run(["make", "-C", str(build)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (build / "trec_eval").is_file():
        return None, f"building trec_eval from {sources} failed: {done.stderr.strip()[-200:]}"
    return str(build / "trec_eval"), f"built from {sources}"


def timed(command: Sequence[str]) -> tuple[float, float, float, bytes]:
    """Wall seconds, CPU seconds, peak MB and stdout of one whole process."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{' '.join(command)} failed")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read()


def c_metrics(output: bytes) -> dict[str, float]:
    """The ``all`` lines of trec_eval's output as ``{measure: value}``."""
    found = {}
    for line in output.decode().splitlines():
        measure, query, value = line.split()
        if query == "all":
            found[measure] = float(value)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="1,10")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    podium = str(Path(sys.executable).with_name("podium"))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPUs, load average {load}; {args.rounds} rounds per scale\n")
    rows = []
    with tempfile.TemporaryDirectory(prefix="podium-trec-bench-") as temporary:
        work = Path(temporary)
        binary, how = c_trec_eval(work)
        print(f"C trec_eval: {how}\n")
        inputs = build_inputs("trec", shared_dir())
        for scale in [int(s) for s in args.scales.split(",") if s]:
            qrels, run = inputs.write(work / f"x{scale}", scale)
            files = ["--gold", str(qrels), "--submission", str(run)]
            commands = {
                "bare pytrec_eval": [sys.executable, "-c", BARE, str(qrels), str(run)],
                "podium score": [podium, "score", "--scorer", "trec", *files, "--json"],
            }
            if binary:
                measures = [item for m in ("map", "P.10", "ndcg_cut.10", "recip_rank") for item in ("-m", m)]
                commands["C trec_eval"] = [binary, *measures, str(qrels), str(run)]
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
            outputs: dict[str, bytes] = {}
            for _ in range(args.rounds):
                for name, command in commands.items():
                    wall, cpu, peak, out = timed(command)
                    runs[name].append((wall, cpu, peak))
                    outputs[name] = out
            bare = json.loads(outputs["bare pytrec_eval"])
            ours = json.loads(outputs["podium score"])["metrics"]
            agree = all(abs(bare[m] - ours[m]) <= 1e-12 for m in MEASURES)
            note = "agree to 1e-12" if agree else f"DIFFER: {bare} vs {ours}"
            if binary:
                theirs = c_metrics(outputs["C trec_eval"])
                agree_c = all(abs(theirs[m] - ours[m]) <= 5e-5 for m in MEASURES)
                note += "; C trec_eval's four decimals " + ("agree" if agree_c else f"DIFFER: {theirs}")
            size = (qrels.stat().st_size + run.stat().st_size) / 1e6
            for name, measured in runs.items():
                ratio = [m[0] / b[0] for m, b in zip(measured, runs["podium score"], strict=True)]
                ratio_cpu = [m[1] / b[1] for m, b in zip(measured, runs["podium score"], strict=True)]
                rows.append(
                    [
                        f"{scale}x ({size:.0f} MB)",
                        name,
                        f"{statistics.median(m[0] for m in measured):.3f}",
                        f"{statistics.median(m[1] for m in measured):.3f}",
                        f"{statistics.median(m[2] for m in measured):.0f}",
                        f"{statistics.median(ratio):.2f}x / {statistics.median(ratio_cpu):.2f}x",
                    ]
                )
            rows.append([f"{scale}x", "numbers", note, "", "", ""])
            shutil.rmtree(work / f"x{scale}", ignore_errors=True)
    head = ["scale", "program", "wall s", "CPU s", "peak MB", "time / podium score's (wall / CPU, paired)"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        for row in [head, *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    print(f"\nload average at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
