"""A private split, over every scorer that admits one: what participants see depends on the public units alone.

For every registered scorer that can restrict its metric to units (``Scorer.splittable``), the gold pairs of
the secrecy test (``tests/scorers/secrecy``) are mixed into a third gold: gold A on the public units, gold B on
the private ones. A and the mix then differ only on private units, and every submission must get the same public
report (metrics, breakdowns, unit statistics) from both, while the private board sees the difference where there
is one. The split itself is checked too: it is fixed by the secret, near the share, and a report on a subset of
units is the task's own metric on those units (micro-averaged counts summed, not scores averaged).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scorers import InvalidGold, ValidationError, get_scorer, register, scorer_class, scorer_names, unregister
from scorers.generic.keyed import unit_key
from scorers.split import Split, split_report
from scorers.tasks.svident import unit_id
from tests.app.labels_scorer import LabelScorer
from tests.scorers.secrecy import PAIRS, Pair
from tests.scorers.secrecy import famus as _famus  # noqa: F401  (each module declares its generators)
from tests.scorers.secrecy import generic as _generic  # noqa: F401
from tests.scorers.secrecy import labels as _labels  # noqa: F401
from tests.scorers.secrecy import scier as _scier  # noqa: F401
from tests.scorers.secrecy import svident as _svident  # noqa: F401

SPLIT = Split(0.5, "a secret only the server holds")


@pytest.fixture(scope="module", autouse=True)
def label_scorer() -> Iterator[None]:
    added = LabelScorer.name not in scorer_names()
    if added:
        register(LabelScorer)
    yield
    if added:
        unregister(LabelScorer.name)


def _jsonl(key: str) -> Callable[[bytes, bytes, dict[str, Any], Split], bytes]:
    """Mix JSON Lines golds whose lines are units named by ``key``."""

    def mix(a: bytes, b: bytes, options: dict[str, Any], split: Split) -> bytes:
        lines_a = [json.loads(line) for line in a.decode().splitlines() if line.strip()]
        lines_b = {line[key]: line for line in (json.loads(x) for x in b.decode().splitlines() if x.strip())}
        mixed = [lines_b[line[key]] if split.is_private(str(line[key])) else line for line in lines_a]
        return "\n".join(json.dumps(line) for line in mixed).encode()

    return mix


def _mix_labels(a: bytes, b: bytes, options: dict[str, Any], split: Split) -> bytes:
    gold_a, gold_b = json.loads(a), json.loads(b)
    return json.dumps({k: gold_b[k] if split.is_private(k) else v for k, v in gold_a.items()}).encode()


def _trec(a: bytes, b: bytes, options: dict[str, Any], split: Split) -> bytes:
    keep = [line for line in a.decode().splitlines() if not split.is_private(line.split()[0])]
    take = [line for line in b.decode().splitlines() if split.is_private(line.split()[0])]
    return ("\n".join(keep + take) + "\n").encode()


def _mix_svident(a: bytes, b: bytes, options: dict[str, Any], split: Split) -> bytes:
    rows_a = list(csv.DictReader(io.StringIO(a.decode()), delimiter="\t"))
    rows_b = {row["uuid"]: row for row in csv.DictReader(io.StringIO(b.decode()), delimiter="\t")}
    header = list(rows_a[0])
    mixed = [rows_b[r["uuid"]] if split.is_private(unit_id(r["lang"], r["doc_id"])) else r for r in rows_a]
    return ("\n".join(["\t".join(header), *("\t".join(r[h] for h in header) for r in mixed)]) + "\n").encode()


def _keyed(a: bytes, b: bytes, options: dict[str, Any], split: Split) -> bytes:
    """Gold A with gold B's value where A puts the item in a private unit (A's group columns kept)."""
    fmt, group_by = options["format"], options["group_by"]
    value = "label" if "label_column" in options else "value"

    def rows(data: bytes) -> list[dict[str, Any]]:
        if fmt == "jsonl":
            return [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        return list(csv.DictReader(io.StringIO(data.decode()), delimiter="\t" if fmt == "tsv" else ","))

    rows_a, values_b = rows(a), {row["id"]: row[value] for row in rows(b)}
    for row in rows_a:
        unit = unit_key([str(row[c]) for c in group_by]) if group_by else row["id"]
        if split.is_private(unit):
            row[value] = values_b[row["id"]]
    if fmt == "jsonl":
        return "\n".join(json.dumps(row) for row in rows_a).encode()
    sep, header = ("\t" if fmt == "tsv" else ","), list(rows_a[0])
    return "".join(
        sep.join(str(r[h]) for h in header) + "\n" for r in [dict(zip(header, header, strict=True)), *rows_a]
    ).encode()


#: How to mix gold A (public units) with gold B (private units), per scorer.
MIXERS: dict[str, Callable[[bytes, bytes, dict[str, Any], Split], bytes]] = {
    "scier-ere": _jsonl("doc_id"),
    "scier-re": _jsonl("doc_id"),
    "famus-sv": _jsonl("instance_id"),
    "svident-detection": _mix_svident,
    "svident-disambiguation": _mix_svident,
    "trec": _trec,
    "classification": _keyed,
    "regression": _keyed,
    LabelScorer.name: _mix_labels,
}
SPLITTABLE = sorted([*(n for n in scorer_names() if scorer_class(n).splittable), LabelScorer.name])


def test_every_scorer_that_admits_a_split_has_a_mixer() -> None:
    assert "program" not in SPLITTABLE and "famus-cdae" not in SPLITTABLE
    assert set(SPLITTABLE) <= set(MIXERS), "a splittable scorer needs a mixer here"


def _valid(name: str, options: dict[str, Any], gold: bytes) -> bool:
    try:
        get_scorer(name, options).parse_gold(gold)
    except InvalidGold:
        return False
    return True


def _reports(name: str, options: dict[str, Any], gold: bytes, submission: bytes) -> Any:
    scorer = get_scorer(name, options)
    parsed_gold = scorer.parse_gold(gold)
    try:
        parsed = scorer.parse_submission(submission, scorer.public_view(parsed_gold))
    except ValidationError:
        return None
    return split_report(scorer, parsed_gold, parsed, SPLIT)


@pytest.mark.parametrize("name", SPLITTABLE)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_golds_that_differ_only_on_private_units_give_the_same_public_report(name: str, data: st.DataObject) -> None:
    pair: Pair = data.draw(PAIRS[name]())
    mixed = MIXERS[name](pair.gold_a, pair.gold_b, pair.options, SPLIT)
    assume(_valid(name, pair.options, mixed))  # a mix may lack what a gold needs (SV-Ident Task 2: a query)
    for submission in pair.submissions:
        on_a = _reports(name, pair.options, pair.gold_a, submission)
        on_mix = _reports(name, pair.options, mixed, submission)
        assert (on_a is None) == (on_mix is None)
        if on_a is None:
            continue
        assert on_a.public.metrics == on_mix.public.metrics
        assert on_a.public.breakdown == on_mix.public.breakdown
        assert on_a.public.units == on_mix.public.units
        assert not set(on_a.public.units) & set(on_a.private_units), "no unit is both"


@pytest.mark.parametrize("name", ["famus-sv", "scier-re", LabelScorer.name])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_private_board_sees_the_private_units(name: str, data: st.DataObject) -> None:
    """The mix is not a no-op: where the golds differ on a private unit the private units' statistics differ."""
    pair: Pair = data.draw(PAIRS[name]())
    mixed = MIXERS[name](pair.gold_a, pair.gold_b, pair.options, SPLIT)
    assume(_valid(name, pair.options, mixed))
    for submission in pair.submissions:
        on_b = _reports(name, pair.options, pair.gold_b, submission)
        on_mix = _reports(name, pair.options, mixed, submission)
        if on_b is not None and on_mix is not None:
            assert on_mix.private_units == on_b.private_units
            assert on_mix.private_columns == on_b.private_columns  # the private board's breakdowns: its units'


def test_the_split_is_fixed_by_the_secret_and_near_the_share() -> None:
    units = [f"doc-{i}" for i in range(4000)]
    private = SPLIT.private_units(units)
    assert private == Split(0.5, SPLIT.secret).private_units(units), "the same on every call"
    assert 1800 < len(private) < 2200
    assert private != Split(0.5, "another secret").private_units(units), "another phase splits otherwise"
    assert len(Split(0.2, SPLIT.secret).private_units(units)) < 1000
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        Split(1.0, SPLIT.secret)


def test_a_micro_averaged_metric_on_the_public_units_sums_their_counts() -> None:
    """famus-sv's F1 on the public units is the F1 of their summed counts, not a mean of per-instance scores."""
    ids = [f"i{i:02d}" for i in range(40)]
    gold = "\n".join(json.dumps({"instance_id": i, "valid_source": n % 3 == 0}) for n, i in enumerate(ids)).encode()
    predicted = {i: int(n % 2 == 0) for n, i in enumerate(ids)}
    scorer = get_scorer("famus-sv")
    parsed = scorer.parse_gold(gold)
    report = split_report(
        scorer, parsed, scorer.parse_submission(json.dumps(predicted).encode(), ids_view(parsed)), SPLIT
    )
    public = [n for n, i in enumerate(ids) if not SPLIT.is_private(i)]
    tp = sum(1 for n in public if n % 3 == 0 and n % 2 == 0)
    fp = sum(1 for n in public if n % 3 != 0 and n % 2 == 0)
    fn = sum(1 for n in public if n % 3 == 0 and n % 2 != 0)
    assert report.public.metrics["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert report.public.metrics["accuracy"] == pytest.approx(
        sum(1 for n in public if (n % 3 == 0) == (n % 2 == 0)) / len(public)
    )
    whole = scorer.compute(parsed, predicted)
    assert report.private_metrics != report.public.metrics or whole.metrics == report.public.metrics


def ids_view(parsed: Any) -> Any:
    return get_scorer("famus-sv").public_view(parsed)


@pytest.mark.parametrize("board", ["private", "all"])
def test_the_private_board_breaks_its_metric_down_on_its_own_units(board: str) -> None:
    """SV-Ident's per-language columns of the private board: the breakdown of the private units (or all units), as
    the public report's is of the public ones, and only the dimensions a leaderboard shows."""
    from scorers.split import restricted
    from tests.conftest import ROOT

    scorer = get_scorer("svident-detection")
    gold = scorer.parse_gold((ROOT / "examples" / "svident" / "data" / "test.tsv").read_bytes())
    public = scorer.public_view(gold)
    sample = json.loads(scorer.sample_submission(public))
    guessed = {key: str(n % 2) for n, key in enumerate(sorted(sample))}
    submission = scorer.parse_submission(json.dumps(guessed).encode(), public)
    stats = scorer.unit_stats(gold, submission)  # 4 (language, document) groups, 2 per language

    def languages(secret: str) -> list[str]:
        return sorted(stats[u]["language"] for u in Split(0.5, secret).private_units(stats))

    # A secret whose private half holds one group of each language (found, not guessed: the split is a hash).
    secret = next(f"secret {i}" for i in range(200) if languages(f"secret {i}") == ["de", "en"])
    report = split_report(scorer, gold, submission, Split(0.5, secret, board))  # type: ignore[arg-type]
    units = report.private_units if board == "private" else stats
    assert set(report.private_columns) == {"language"} == set(scorer.leaderboard_breakdowns)
    assert report.private_columns["language"] == restricted(scorer, gold, submission, units).breakdown["language"]
    assert report.private_columns["language"] != report.public.breakdown["language"], "not the public units'"
