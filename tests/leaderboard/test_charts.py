"""SVG charts: series data exactly, and SVG that parses, is deterministic and cannot carry markup."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import matplotlib
import pytest

from leaderboard.charts import (
    MAX_BARS,
    document_alt_text,
    document_chart,
    document_scores,
    label,
    progress_alt_text,
    progress_chart,
    progress_series,
)
from leaderboard.ranking import Candidate, Rules
from leaderboard.tables import Column
from tests.leaderboard.builders import make_candidate

SCRIPT = "<script>alert(1)</script>"
SVG_NS = "{http://www.w3.org/2000/svg}"
F1 = Rules("f1")


def svg_texts(svg: bytes) -> list[str]:
    """The SVG parsed as XML (it must parse), and the text of its <text> elements in document order."""
    root = ET.fromstring(svg)
    return ["".join(node.itertext()) for node in root.iter(f"{SVG_NS}text")]


def _progress_candidates() -> list[Candidate]:
    return [
        make_candidate(1, SCRIPT, 0, {"f1": 0.30}),
        make_candidate(2, SCRIPT, 1, {"f1": 0.20}),  # worse: no new point
        make_candidate(3, SCRIPT, 2, {"f1": 0.50}),
        make_candidate(4, "b", 1, {"f1": 0.40}),
        make_candidate(5, "b", 3, {"f1": 0.90}, status="failed"),  # never counts
        make_candidate(6, "hidden", 1, None),
        make_candidate(7, "org", 0, {"f1": 0.35}, baseline=True, system="bm25"),
    ]


def test_progress_series_has_a_point_per_improvement_best_final_first() -> None:
    series = progress_series(_progress_candidates(), F1)
    assert [(s.label, s.baseline, [(t.hour, v) for t, v in s.points]) for s in series] == [
        (SCRIPT, False, [(12, 0.30), (14, 0.50)]),
        ("b", False, [(13, 0.40)]),
        ("bm25 (baseline)", True, [(12, 0.35)]),
    ]


def test_progress_series_for_a_lower_is_better_metric() -> None:
    rules = Rules("error", higher_is_better={"error": False})
    candidates = [make_candidate(1, "a", 0, {"error": 0.5}), make_candidate(2, "a", 1, {"error": 0.2})]
    candidates.append(make_candidate(3, "a", 2, {"error": 0.3}))
    assert [v for _, v in progress_series(candidates, rules)[0].points] == [0.5, 0.2]


def test_progress_chart_escapes_a_script_team_name() -> None:
    svg = progress_chart(_progress_candidates(), F1)
    assert b"<script" not in svg.lower()
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    texts = svg_texts(svg)
    assert SCRIPT in texts and "bm25 (baseline)" in texts and "Best f1 over time" in texts


def test_charts_are_byte_identical_across_renders() -> None:
    candidates = _progress_candidates()
    assert progress_chart(candidates, F1) == progress_chart(candidates, F1)
    scores = {"d1": 0.5, "d2": 0.7}
    assert document_chart(scores, metric="f1") == document_chart(scores, metric="f1")


def test_rendering_leaves_matplotlib_settings_as_they_were() -> None:
    before = dict(matplotlib.rcParams)
    progress_chart(_progress_candidates(), F1)
    assert dict(matplotlib.rcParams) == before


@pytest.mark.parametrize(
    "team",
    [
        "Team $\\frac{a}{",  # broken mathtext: shown as typed, never parsed
        "ctrl\x00\x1b\x7fchars",  # characters XML 1.0 cannot hold
        "团队 Ω",  # glyphs DejaVu Sans lacks: no warning, the browser picks a font
        "x" * 200,
    ],
)
def test_hostile_or_unusual_names_render_to_valid_svg(team: str) -> None:
    svg = progress_chart([make_candidate(1, team, 0, {"f1": 0.5})], F1)
    assert label(team) in svg_texts(svg)


def test_label_strips_control_characters_and_shortens() -> None:
    assert label("a\x00b\u200bc\n") == "ab\u200bc"  # a zero-width space is a format character, kept
    assert label("x" * 40) == "x" * 27 + "…"


def test_empty_charts_say_so() -> None:
    assert "No scored submissions yet" in svg_texts(progress_chart([], F1))
    assert "No per-document scores" in svg_texts(document_chart({}, metric="f1"))
    assert progress_alt_text([], F1) == "Chart of the best f1 over time: no scored submissions yet."


def test_progress_alt_text_names_the_leader() -> None:
    assert progress_alt_text(_progress_candidates(), F1, metric_label="F1") == (
        "Step chart of the best F1 over time for 3 of 3 entrants. "
        f"Leading: {SCRIPT} with 50.00%, reached 2024-05-01 14:00 UTC."
    )


@pytest.mark.parametrize("values", [[1e308], [1e308, 0.5], [-1.7e308, 1.7e308], [5e307, 1e308]])
@pytest.mark.parametrize("fraction", [True, False])
def test_any_finite_scores_draw(values: list[float], fraction: bool) -> None:
    """matplotlib fails on an axis whose span overflows; the chart draws such values in units of a power of ten."""
    candidates = [make_candidate(i, f"t{i}", i, {"f1": v}) for i, v in enumerate(values)]
    column = Column("f1", "F1", True, fraction=fraction)
    texts = svg_texts(progress_chart(candidates, F1, column=column))
    assert any("× 1e308" in text for text in texts)
    alt = progress_alt_text(candidates, F1, column=column)
    assert "inf" not in alt and ("e+310%" in alt if fraction else "e+308," in alt)


def test_document_bars_are_sorted_best_first() -> None:
    svg = document_chart({"en/doc2": 0.5, "en/doc10": 0.9, "de/1": 0.1}, metric="f1")
    texts = svg_texts(svg)
    assert [t for t in texts if "/" in t] == ["en/doc10", "en/doc2", "de/1"]
    assert [t for t in texts if t in ("90.00", "50.00", "10.00")] == ["90.00", "50.00", "10.00"]
    assert b"<script" not in svg.lower()


def test_lower_is_better_documents_put_the_smallest_first() -> None:
    text = document_alt_text({"a": 0.2, "b": 0.1}, metric="error", higher_is_better=False)
    assert text == "Bar chart of error for 2 documents, from 10.00% (b) to 20.00% (a)."


def test_many_documents_show_the_best_and_worst_halves() -> None:
    scores = {f"d{i}": i / 100 for i in range(80)}
    texts = svg_texts(document_chart(scores, metric="f1"))
    assert f"f1 per document (best and worst {MAX_BARS} of 80)" in texts
    assert "d79" in texts and "d0" in texts and "d40" not in texts  # d40 is in the middle, left out


def test_document_scores_from_a_breakdown_skip_documents_without_a_value() -> None:
    breakdown = {"document": {"d10": {"f1": 0.5}, "d2": {"f1": math.nan}, "d1": {"f1": 1.0}, "d3": {"p": 0.1}}}
    assert document_scores(breakdown, "f1") == {"d1": 1.0, "d10": 0.5}
    assert document_alt_text(document_scores(breakdown, "f1"), metric="f1") == (
        "Bar chart of f1 for 2 documents, from 100.00% (d1) to 50.00% (d10)."
    )


def test_times_are_shown_in_utc_whatever_zone_they_come_in() -> None:
    # 12:00 and 18:00 UTC on 1 May; the same moments given in UTC+2 (14:00 and 20:00) draw the same chart.
    candidates = [make_candidate(1, "a", 0, {"f1": 0.1}), make_candidate(2, "a", 6, {"f1": 0.2})]
    plus_two = timezone(timedelta(hours=2))
    shifted = [replace(c, submitted_at=c.submitted_at.astimezone(plus_two)) for c in candidates]
    svg = progress_chart(candidates, F1)
    assert progress_chart(shifted, F1) == svg
    texts = svg_texts(svg)
    # The day every tick shares is said once, in the axis label.
    assert texts[: texts.index("Upload time (UTC), 2024-05-01") + 1] == [
        "12:00",
        "14:00",
        "16:00",
        "18:00",
        "Upload time (UTC), 2024-05-01",
    ]


@pytest.mark.parametrize(
    ("first", "seconds", "days"),
    [
        # Across midnight: the ticks are times of two days ("23:45", "00:00", "00:15").
        (datetime(2026, 12, 1, 23, 58, tzinfo=UTC), (0, 5, 10), "2026-12-01 to 2026-12-02"),
        (datetime(2026, 12, 1, 18, tzinfo=UTC), (0, 30 * 3600), "2026-12-01 to 2026-12-03"),
        # Across a new year (the axis has a margin of 4 % of the span on either side: 1.2 days).
        (datetime(2026, 12, 10, tzinfo=UTC), (0, 30 * 86400), "2026-12-08 to 2027-01-10"),
    ],
)
def test_an_axis_over_several_days_names_its_first_and_last_day(
    first: datetime, seconds: tuple[int, ...], days: str
) -> None:
    candidates = [
        replace(make_candidate(n + 1, "a", 0, {"f1": 0.1 * (n + 1)}), submitted_at=first + timedelta(seconds=s))
        for n, s in enumerate(seconds)
    ]
    texts = svg_texts(progress_chart(candidates, F1))
    assert f"Upload time (UTC), {days}" in texts, texts


def test_a_score_axis_stays_within_0_and_100_percent_and_one_value_gets_a_band() -> None:
    from leaderboard.charts import score_limits

    assert score_limits([0.5, 1.0]) == (0.45, 1.0)
    assert score_limits([0.0, 0.2]) == (0.0, pytest.approx(0.22))
    low, high = score_limits([0.9])  # type: ignore[misc]
    assert low < 0.9 < high and high - low == pytest.approx(0.04)
    assert score_limits([0.5, 3.2]) is None, "an error or a count keeps matplotlib's limits"


def test_the_time_axis_spans_at_least_an_hour_around_the_uploads() -> None:
    from leaderboard.charts import MIN_TIME_SPAN, time_limits

    moment = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert time_limits(moment, moment) == (moment - MIN_TIME_SPAN / 2, moment + MIN_TIME_SPAN / 2)
    low, high = time_limits(moment, moment + timedelta(days=10))
    assert (low, high) == (moment - timedelta(days=0.4), moment + timedelta(days=10.4))
