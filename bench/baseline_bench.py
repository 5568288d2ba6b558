"""Throughput and peak memory of every hosted baseline on the real release data.

Each baseline runs once per device in a fresh process (so peak memory is its own) on the inputs
derived from a real gold file, exactly as the platform would run it, and its submission is scored.
Items are the task's units (sentences for SV-Ident and SciER, instances for FAMuS); items per
second count the whole run: reading, training, loading the model and predicting. Work units are
what the run reports as progress: texts embedded for the MiniLM systems (training sentences or
variable passages, then inputs), items for the others. The systems that want a GPU also run on
CUDA when torch sees one.

    .venv/bin/python bench/baseline_bench.py [--data-dir ../shared/data] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Case:
    baseline: str
    scorer: str
    gold: str
    training: tuple[tuple[str, str], ...] = ()
    resources: tuple[tuple[str, str], ...] = ()


SVIDENT_TRAIN = (("train.tsv", "svident/train.tsv"),)
SCIER_TRAIN = (("train-sentences.jsonl", "scier/LLM/train.jsonl"),)
CASES = (
    Case("svident-tfidf-lr", "svident-detection", "svident/val.tsv", SVIDENT_TRAIN),
    Case("svident-minilm-lr", "svident-detection", "svident/val.tsv", SVIDENT_TRAIN),
    Case("svident-bm25", "svident-disambiguation", "svident/val.tsv", SVIDENT_TRAIN),
    Case("svident-minilm-dense", "svident-disambiguation", "svident/val.tsv", SVIDENT_TRAIN),
    Case("scier-gazetteer", "scier-ere", "scier/PLM/test.jsonl", SCIER_TRAIN),
    Case("scier-gazetteer", "scier-re", "scier/PLM/test.jsonl", SCIER_TRAIN),
    Case("famus-sv-lemma", "famus-sv", "famus/FACTSlab_FAMuS/data/source_validation/test.jsonl"),
    Case(
        "famus-cdae-report",
        "famus-cdae",
        "famus/derived/dev_source_gold_iterx.jsonl",
        resources=(("report-gold.jsonl", "famus/derived/dev_report_gold_iterx.jsonl"),),
    ),
)


def _items(scorer: str, inputs: bytes) -> int:
    """Sentences for SV-Ident and SciER, instances for FAMuS."""
    text = inputs.decode("utf-8")
    if scorer.startswith("svident"):
        return sum(1 for _ in csv.DictReader(io.StringIO(text, newline=""), delimiter="\t"))
    lines = [line for line in text.splitlines() if line.strip()]
    if scorer.startswith("scier"):
        return sum(len(json.loads(line)["sentences"]) for line in lines)
    return len(lines)


def _rss_mb(field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of this process in MB, from /proc where there is one.

    ``getrusage``'s ``ru_maxrss`` survives ``exec``, so a child would report its parent's peak.
    """
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(index: int, data_dir: Path) -> None:
    """Run one case in this process and print its measurements as one JSON line."""
    from baselines import BaselineInputs, get_baseline
    from scorers import get_scorer
    from scorers.inputs import participant_inputs

    case = CASES[index]
    gold = (data_dir / case.gold).read_bytes()
    filename, inputs = participant_inputs(case.scorer, gold)
    run_inputs = BaselineInputs(
        case.scorer,
        {name: (data_dir / path).read_bytes() for name, path in case.training},
        {filename: inputs},
        {name: (data_dir / path).read_bytes() for name, path in case.resources},
    )
    baseline = get_baseline(case.baseline)
    device = "cpu"
    if baseline.wants_gpu:
        from baselines.encoders import torch_device

        device = torch_device()
    before = _rss_mb("VmRSS")
    start = time.perf_counter()
    reported: list[int] = [0]

    def progress(done: int, total: int) -> None:
        reported[0] = total

    submission = baseline.run(run_inputs, progress, lambda line: None, lambda: False)
    seconds = time.perf_counter() - start
    peak_gpu = 0.0
    if device == "cuda":
        import torch

        peak_gpu = torch.cuda.max_memory_allocated() / 2**20
    scorer = get_scorer(case.scorer)
    parsed = scorer.parse_gold(gold)
    metrics = scorer.compute(parsed, scorer.parse_submission(submission, scorer.public_view(parsed))).metrics
    print(
        json.dumps(
            {
                "baseline": case.baseline,
                "scorer": case.scorer,
                "device": device,
                "items": _items(case.scorer, inputs),
                "units": reported[0],
                "seconds": seconds,
                # The process's high-water mark (Python and the libraries included), and where it stood
                # before the run (data read, scorers imported), so the run's own share can be read off.
                "rss_before_mb": before,
                "peak_rss_mb": _rss_mb("VmHWM"),
                "peak_gpu_mb": peak_gpu,
                "metric": scorer.primary_metric,
                "score": metrics[scorer.primary_metric],
            }
        )
    )


def _measure(index: int, data_dir: Path, cpu_only: bool) -> dict[str, Any]:
    env = dict(os.environ)
    if cpu_only:
        env["CUDA_VISIBLE_DEVICES"] = ""  # torch then sees no GPU and the system runs on the CPU
    command = [sys.executable, __file__, "--child", str(index), "--data-dir", str(data_dir)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{CASES[index].baseline} ({CASES[index].scorer}) failed:\n{result.stderr}")
    measured: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


COLUMNS = (
    "baseline",
    "scorer",
    "device",
    "items",
    "seconds",
    "items/s",
    "work units",
    "units/s",
    "RSS before (MB)",
    "peak RSS (MB)",
    "peak GPU (MB)",
    "score",
)


def _row(m: dict[str, Any]) -> str:
    gpu = f"{m['peak_gpu_mb']:,.0f}" if m["device"] == "cuda" else "-"
    cells = (
        m["baseline"],
        m["scorer"],
        m["device"],
        f"{m['items']:,}",
        f"{m['seconds']:.2f}",
        f"{m['items'] / m['seconds']:,.0f}",
        f"{m['units']:,}",
        f"{m['units'] / m['seconds']:,.0f}",
        f"{m['rss_before_mb']:,.0f}",
        f"{m['peak_rss_mb']:,.0f}",
        gpu,
        f"{m['metric']} {m['score']:.4f}",
    )
    return "| " + " | ".join(cells) + " |"


def _gpu_present() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_data = Path(os.environ.get("PODIUM_SHARED_DIR") or ROOT.parent / "shared") / "data"
    parser.add_argument("--data-dir", type=Path, default=default_data, help="folder laid out like ../shared/data")
    parser.add_argument("--only", nargs="*", default=[], help="baseline names to run (default: all)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.data_dir)
        return
    from baselines import baseline_class

    gpu = _gpu_present()
    print(f"data: {args.data_dir}; GPU: {'yes' if gpu else 'none'}; CPU cores: {os.cpu_count()}")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---|---|---|" + "---:|" * (len(COLUMNS) - 4) + "---|")
    for index, case in enumerate(CASES):
        if args.only and case.baseline not in args.only:
            continue
        runs = [True, False] if gpu and baseline_class(case.baseline).wants_gpu else [True]
        for cpu_only in runs:
            print(_row(_measure(index, args.data_dir, cpu_only)), flush=True)


if __name__ == "__main__":
    main()
