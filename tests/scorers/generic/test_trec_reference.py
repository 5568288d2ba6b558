"""Every expected output of trec_eval 9.0.8's own test suite (../shared/reference/trec_eval), reproduced by ``trec``.

Each ``out.*`` file is checked with the options its command line in ``QUICKTEST_COMMANDS.txt`` stands for (``-q``,
``-c``, ``-M``, ``-l``) and the measures it prints (their output names are what ``measures`` takes); every number,
per query and over all queries, must agree to trec_eval's four printed decimals. ``runid`` and ``relstring`` are
text, not measures.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from scorers import get_scorer
from tests.conftest import shared_dir

REFERENCE = shared_dir() / "reference" / "trec_eval"
#: trec_eval prints four decimals.
TOLERANCE = 5e-5 + 1e-12
TEXT_MEASURES = ("runid", "relstring")


def _commands() -> dict[str, list[str]]:
    """``out.*`` file name -> the trec_eval arguments behind it (flags and the two input files)."""
    found = {}
    text = (REFERENCE / "QUICKTEST_COMMANDS.txt").read_text(encoding="utf-8")
    for line in text.splitlines():
        if "./trec_eval" not in line or "| diff - " not in line:
            continue
        command, compared = line.split("| diff - ")
        found[Path(compared.strip()).name] = shlex.split(command)[1:]
    return found


def _options(arguments: list[str]) -> tuple[dict[str, Any], str, str]:
    """Scorer options for trec_eval flags (measures come from the expected output), and the qrels and run files."""
    options: dict[str, Any] = {}
    flags, (qrels, run) = arguments[:-2], arguments[-2:]
    for flag in flags:
        if flag == "-q":
            options["per_query"] = True
        elif flag == "-c":
            options["complete_queries"] = True
        elif flag.startswith("-M"):
            options["max_docs_per_query"] = int(flag[2:])
        elif flag.startswith("-l"):
            options["relevance_level"] = int(flag[2:])
        else:  # -m and its measure list: the expected output names the measures
            assert flag == "-m" or flag.startswith("-m") or not flag.startswith("-"), flag
    return options, Path(qrels).name, Path(run).name


def _expected(path: Path) -> dict[str, dict[str, float]]:
    """``{query or 'all': {measure: value}}`` of a trec_eval output file, text measures left out."""
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        measure, query, value = (field.strip() for field in line.split("\t"))
        if not measure.startswith(TEXT_MEASURES):
            out.setdefault(query, {})[measure] = float(value)
    return out


OUTPUTS = sorted(p.name for p in REFERENCE.glob("out.*")) if REFERENCE.is_dir() else []
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(), reason=f"trec_eval's test files not found at {REFERENCE} (set PODIUM_SHARED_DIR)"
)


@needs_reference
def test_every_output_file_has_its_command() -> None:
    assert len(OUTPUTS) >= 7
    assert set(OUTPUTS) <= set(_commands())


@needs_reference
@pytest.mark.parametrize("output", OUTPUTS)
def test_trec_reproduces_trec_evals_own_test_outputs(output: str) -> None:
    options, qrels, run = _options(_commands()[output])
    expected = _expected(REFERENCE / output)
    measures = list(dict.fromkeys(m for values in expected.values() for m in values))
    scorer = get_scorer("trec", {"measures": measures, **options})
    report = scorer.score((REFERENCE / qrels).read_bytes(), (REFERENCE / run).read_bytes())
    compared = 0
    for query, values in expected.items():
        got = report.metrics if query == "all" else report.breakdown["query"][query]
        for measure, value in values.items():
            assert got[measure] == pytest.approx(value, abs=TOLERANCE, rel=0), (query, measure)
            compared += 1
    assert compared == sum(len(v) for v in expected.values()) > 25
    assert list(report.metrics) == measures
    if options.get("per_query"):
        printed = set(expected) - {"all"}
        # trec_eval -q prints the queries it evaluated; -c also counts (and we also list) those the run lacks.
        assert printed <= set(report.breakdown["query"])
        missing = {q for q, unit in report.units.items() if unit["missing"]}
        assert set(report.breakdown["query"]) == printed | missing
        assert bool(missing) == bool(options.get("complete_queries")) and not missing & printed
