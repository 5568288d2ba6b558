"""Every report the scorers give on the shared inputs, written to a folder so that two trees can be compared byte for
byte (``diff -r``): the proof that a change to a scorer's speed changed none of its output.

For every conformance case (valid and invalid, ``../shared/conformance``), trec_eval's own test files under a few
option sets, and the score bench's inputs at the given scales, two files: ``<case>.cli`` (the whole
``podium score --json`` output: exit code, stdout and stderr, run as a process) and ``<case>.report`` (the report
with its unit statistics as ``json.dumps`` writes it, or the refusal's class, message and problems, computed in
this process). A scale whose inputs would be too large for this machine (the 1.47 GB Task 2 run and the 3.5 GB TREC
run at 100x) is left out with a note on stderr. The generic ``classification`` and ``regression`` scorers, when
named in ``--scorers``, have no conformance cases nor score-bench inputs: their example bundle's test file against
itself, and the generated files of ``bench/server_cost_bench.py`` (``GENERIC_ROWS`` rows times the scale, two
seeds), each with the example's options and without its ``group_by``.

    .venv/bin/python bench/report_dump.py OUT_DIR [--scales 1,10,100] [--scorers a,b] [--no-cli-at-scale]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench.score_bench import shared_dir  # noqa: E402
from bench.score_inputs import SCORERS, build_inputs  # noqa: E402
from scorers import ScorerError, get_scorer, unpack_submission  # noqa: E402

#: Scorers whose inputs are generated as the server cost bench's (``generic``).
GENERIC = ("classification", "regression")
#: Bench inputs left out at a scale: too large to hold on a small machine.
TOO_LARGE = {("svident-disambiguation", 100), ("trec", 100)}
#: trec_eval's test files under these option sets (each a flag of trec_eval's).
TREC_OPTIONS: dict[str, dict[str, Any]] = {
    "default": {},
    "q": {"per_query": True},
    "c": {"complete_queries": True, "per_query": True},
    "M10": {"max_docs_per_query": 10},
    "l2": {"relevance_level": 2},
    "J": {"judged_docs_only": True},
    "many": {
        "measures": [
            "map",
            "P_5",
            "recall_100",
            "ndcg",
            "Rprec",
            "bpref",
            "gm_map",
            "num_rel_ret",
            "iprec_at_recall_0.10",
            "success_1",
        ]
    },
}


def report_text(scorer: str, gold: Path, submission: Path, options: dict[str, Any]) -> str:
    """The whole report with its units, or the refusal, as text."""
    try:
        instance = get_scorer(scorer, options)
        parsed_gold = instance.parse_gold(gold.read_bytes())
        data = submission.read_bytes()
        content = data if instance.raw_submission else unpack_submission(data)[0]
        parsed = instance.parse_submission(content, instance.public_view(parsed_gold))
        return json.dumps(instance.compute(parsed_gold, parsed).to_dict(with_units=True), ensure_ascii=False)
    except ScorerError as exc:
        return json.dumps(
            {"error": type(exc).__name__, "message": str(exc), "problems": getattr(exc, "problems", None)},
            ensure_ascii=False,
            default=repr,
        )


def cli_text(scorer: str, gold: Path, submission: Path, config: Path | None) -> str:
    command = [str(Path(sys.executable).with_name("podium")), "score", "--scorer", scorer]
    command += ["--gold", str(gold), "--submission", str(submission), "--json"]
    if config is not None:
        command += ["--config", str(config)]
    done = subprocess.run(command, capture_output=True, cwd=ROOT, check=False)
    return f"exit {done.returncode}\n--- stdout\n{done.stdout.decode()}--- stderr\n{done.stderr.decode()}"


def dump(out: Path, name: str, scorer: str, gold: Path, submission: Path, config: Path | None, cli: bool) -> None:
    options = json.loads(config.read_text()) if config is not None else {}
    (out / f"{name}.report").write_text(report_text(scorer, gold, submission, options))
    if cli:
        (out / f"{name}.cli").write_text(cli_text(scorer, gold, submission, config))


def _one(case: Path, stem: str) -> Path:
    (path,) = [p for p in case.iterdir() if p.stem == stem]
    return path


def conformance(out: Path, scorers: Sequence[str]) -> None:
    base = shared_dir() / "conformance"
    for invalid in (False, True):
        root = base / "invalid" if invalid else base
        for scorer_dir in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "invalid"):
            if scorer_dir.name not in scorers:
                continue
            for case in sorted(p for p in scorer_dir.iterdir() if (p / "expected.json").is_file()):
                config = case / "config.json"
                name = f"{'invalid-' if invalid else ''}{scorer_dir.name}-{case.name}"
                gold, submission = _one(case, "gold"), _one(case, "submission")
                dump(out, name, scorer_dir.name, gold, submission, config if config.is_file() else None, True)


def trec_reference(out: Path, work: Path) -> None:
    reference = shared_dir() / "reference" / "trec_eval"
    for key, options in TREC_OPTIONS.items():
        config = work / f"trec-{key}.json"
        config.write_text(json.dumps(options))
        for run in ("results.test", "results.trunc"):
            dump(out, f"trec-ref-{run}-{key}", "trec", reference / "qrels.test", reference / run, config, True)


def scaled(out: Path, work: Path, scorers: Sequence[str], scales: Sequence[int], cli: bool) -> None:
    for scorer in scorers:
        inputs = build_inputs(scorer, shared_dir())
        for scale in scales:
            if (scorer, scale) in TOO_LARGE:
                print(f"{scorer} {scale}x left out: too large for this machine", file=sys.stderr)
                continue
            folder = work / scorer / f"x{scale}"
            gold, submission = inputs.write(folder, scale)
            dump(out, f"bench-{scorer}-x{scale}", scorer, gold, submission, None, cli or scale == 1)
            shutil.rmtree(folder, ignore_errors=True)
            print(f"{scorer} {scale}x done", file=sys.stderr, flush=True)


def generic(out: Path, work: Path, scorer: str, scales: Sequence[int], cli: bool) -> None:
    from bench.server_cost_bench import GENERIC_ROWS, generic_inputs

    example = ROOT / "examples" / scorer / "data" / "test.tsv"
    for scale in scales:
        for seed in (7, 8):
            inputs = generic_inputs(scorer, GENERIC_ROWS * scale, seed)
            gold, submission = work / inputs.gold_name, work / inputs.submission_name
            gold.write_bytes(inputs.gold)
            submission.write_bytes(inputs.submission)
            ungrouped = {k: v for k, v in inputs.options.items() if k != "group_by"}
            for name, options in (("grouped", inputs.options), ("plain", ungrouped)):
                config = work / f"{name}.json"
                config.write_text(json.dumps(options))
                dump(out, f"bench-{scorer}-x{scale}-{seed}-{name}", scorer, gold, submission, config, cli or scale == 1)
                if scale == scales[0] and seed == 7:
                    dump(out, f"example-{scorer}-{name}", scorer, example, example, config, True)
        print(f"{scorer} {scale}x done", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--scales", default="1,10,100")
    parser.add_argument("--scorers", default=",".join(SCORERS))
    parser.add_argument("--no-cli-at-scale", action="store_true", help="the CLI output at 1x only")
    parser.add_argument("--no-conformance", action="store_true")
    args = parser.parse_args(argv)
    scorers = [s for s in args.scorers.split(",") if s]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="podium-report-dump-") as temporary:
        work = Path(temporary)
        if not args.no_conformance:
            conformance(args.out, scorers)
            if "trec" in scorers:
                trec_reference(args.out, work)
        scales = [int(s) for s in args.scales.split(",") if s]
        scaled(args.out, work, [s for s in scorers if s not in GENERIC], scales, not args.no_cli_at_scale)
        for scorer in [s for s in scorers if s in GENERIC]:
            generic(args.out, work, scorer, scales, not args.no_cli_at_scale)
    return 0


if __name__ == "__main__":
    sys.exit(main())
