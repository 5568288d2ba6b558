"""Server-rendered SVG charts (matplotlib): best score over time per team, and per-document scores.

Why this way: pages must work with no internet access and no hand-drawn SVG, so matplotlib draws
and writes the SVG. We never touch matplotlib's global state at import: figures are built with the
object API (``Figure`` + the SVG canvas, no ``pyplot``, no backend switch), and the settings a
render needs (fixed ``svg.hashsalt`` for byte-identical output, text kept as ``<text>``, math
parsing off) hold only inside ``rc_context`` while one render runs under a lock, because rcParams
are process-wide.

Safety: team, system and document names are user input. matplotlib escapes text it writes into the
SVG; on top of that, names are drawn with math parsing off (a ``$x$`` name is shown as typed, and a
malformed one cannot make rendering fail), stripped of characters XML cannot hold, and shortened so
a long name cannot push the plot off a phone screen.

Each chart has an ``*_alt_text`` helper that says in words what it shows, for ``alt``/``aria-label``.
"""

from __future__ import annotations

import io
import math
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import matplotlib
import matplotlib.dates as mdates
import numpy as np
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter
from matplotlib.typing import RcKeyType

from leaderboard.ranking import Candidate, EntrantKey, Rules, metric_value, utc
from leaderboard.tables import LARGE, Column, natural_key, percent

#: Settings in force while a chart renders (see the module docstring).
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "podium",
    "svg.fonttype": "none",
    "text.parse_math": False,
    "text.usetex": False,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 11,
    "axes.titlesize": 12,
    "legend.fontsize": 10,
    "timezone": "UTC",
}
_RENDER_LOCK = threading.Lock()
#: About 480 px wide: legible on a phone at full width, where 11 pt text stays about 11 px.
WIDTH_INCHES = 5.0
LABEL_LIMIT = 28
METRIC_LIMIT = 40
MAX_SERIES = 10
MAX_BARS = 50
#: The least span of the time axis: uploads minutes apart (or one alone) still get ticks a person reads.
MIN_TIME_SPAN = timedelta(hours=1)


def score_limits(values: Iterable[float]) -> tuple[float, float] | None:
    """Limits of a score axis for fractions: a little room around the data, never beyond 0 % or 100 %
    (matplotlib's margins would show -2 % or 102 %); one value gets a narrow band around it. None where
    a value lies outside [0, 1] (an error, a count): matplotlib's own limits then."""
    seen = list(values)
    low, high = min(seen), max(seen)
    if low < 0 or high > 1:
        return None
    pad = max((high - low) * 0.1, 0.02)
    return max(0.0, low - pad), min(1.0, high + pad)


def value_exponent(values: Iterable[float]) -> int:
    """The power of ten the values are drawn in units of: 0 for ordinary ones, the largest's for values from
    ``LARGE`` on. matplotlib computes its axis from the span of the data, which overflows to infinity for
    values near the largest float (``-1e308`` to ``1e308``), and then fails; scaled, any finite value draws."""
    largest = max((abs(v) for v in values), default=0.0)
    return math.floor(math.log10(largest)) if largest >= LARGE else 0


def time_limits(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """Limits of the time axis: the uploads' span with a margin, at least ``MIN_TIME_SPAN`` wide and
    centred on the data, so that one upload is a point in the middle with readable ticks either side."""
    pad = max((end - start) * 0.04, (MIN_TIME_SPAN - (end - start)) / 2)
    return start - pad, end + pad


def label(text: str, limit: int = LABEL_LIMIT) -> str:
    """A name made fit for a chart: no control or surrogate characters, at most ``limit`` characters."""
    clean = "".join(
        ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cs") and ch not in ("\ufffe", "\uffff")
    ).strip()
    return clean if len(clean) <= limit else clean[: limit - 1].rstrip() + "…"


def _render(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    FigureCanvasSVG(figure)
    # metadata Date=None: no timestamp in the file, so the same data gives the same bytes.
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    return buffer.getvalue()


def _draw(build: Callable[..., None], *args: Any) -> bytes:
    """Build a figure with ``build(figure, *args)`` and render it, under the chart settings."""
    with _RENDER_LOCK, matplotlib.rc_context(_RC), warnings.catch_warnings():
        # A name in a script DejaVu Sans lacks (CJK, say) still renders: the browser picks a font
        # for the <text>, so matplotlib's note about missing glyphs in its layout font is noise.
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from font", category=UserWarning)
        figure = Figure(layout="constrained")
        build(figure, *args)
        return _render(figure)


# -- (a) best primary score over time ------------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    """One entrant's best-so-far primary score: a point at each upload that improved it."""

    label: str
    baseline: bool
    points: tuple[tuple[datetime, float], ...]

    @property
    def best(self) -> float:
        return self.points[-1][1]


def progress_series(candidates: Iterable[Candidate], rules: Rules) -> list[Series]:
    """Best-so-far primary score per team (and per baseline system), best final score first.

    Only candidates with a visible score count; times are UTC. Ties in the final score are ordered
    by who reached it first, then by label.
    """
    higher = rules.higher_is_better.get(rules.primary, True)
    by_entrant: dict[EntrantKey, list[tuple[datetime, int, float, Candidate]]] = {}
    for c in candidates:
        value = metric_value(c.metrics, rules.primary)
        if c.rankable and value is not None:
            by_entrant.setdefault(c.entrant, []).append((utc(c.submitted_at), c.submission_id, value, c))
    series = []
    for uploads in by_entrant.values():
        uploads.sort(key=lambda u: (u[0], u[1]))
        points: list[tuple[datetime, float]] = []
        for moment, _, value, _ in uploads:
            if not points or (value > points[-1][1] if higher else value < points[-1][1]):
                points.append((moment, value))
        last = uploads[-1][3]
        name = f"{last.system} (baseline)" if last.baseline else last.team
        series.append(Series(name, last.baseline, tuple(points)))
    series.sort(key=lambda s: (-s.best if higher else s.best, s.points[-1][0], s.label))
    return series


def _progress_figure(figure: Figure, series: list[Series], metric: str, until: datetime | None, fraction: bool) -> None:
    shown = series[:MAX_SERIES]
    height = 3.4 + 0.22 * len(shown)  # one legend line per entrant, below the plot
    figure.set_size_inches(WIDTH_INCHES, height)
    ax = figure.add_subplot()
    exponent = value_exponent(v for s in shown for _, v in s.points)
    scale = 10.0**exponent
    ax.set_ylabel(f"{metric} (× 1e{exponent})" if exponent else metric)
    ax.set_xlabel("Upload time (UTC)")
    if fraction and not exponent:
        ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    ax.grid(True, alpha=0.3)
    if not shown:
        ax.text(0.5, 0.5, "No scored submissions yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
        ax.set_xticks([])
        return
    ends = [s.points[-1][0] for s in series] + ([utc(until)] if until is not None else [])
    end = max(ends)
    start = min(s.points[0][0] for s in shown)
    scores = [v / scale for s in shown for _, v in s.points]
    for s in shown:
        # numpy datetime64 is naive; the points are UTC already, and the axis shows UTC.
        moments = [t for t, _ in s.points] + [max(end, s.points[-1][0])]
        times = np.array([t.replace(tzinfo=None) for t in moments], dtype="datetime64[us]")
        values = [v / scale for _, v in s.points] + [s.points[-1][1] / scale]
        style = "--" if s.baseline else "-"
        # Not clipped: a score of 100 % sits on the axis' top edge, drawn whole.
        (line,) = ax.step(
            times, values, where="post", linestyle=style, linewidth=1.8, label=label(s.label), clip_on=False
        )
        ax.plot(times[:-1], values[:-1], "o", color=line.get_color(), markersize=4, clip_on=False)
    limits = score_limits(scores) if fraction else None
    if limits is not None:
        ax.set_ylim(*limits)
    low, high = time_limits(start, end)
    ax.set_xlim(mdates.date2num(low), mdates.date2num(high))  # type: ignore[no-untyped-call]
    # The day that every tick shares, or the first and last day of the axis, goes into the axis label rather
    # than matplotlib's offset text, which sat on the label's line and could run into it. Both days, not the
    # year alone: an axis across midnight has ticks of times only ("23:45, 00:00, 00:15"), and the days are
    # what tells a reader which night it was.
    if low.date() == high.date():
        ax.set_xlabel(f"Upload time (UTC), {low:%Y-%m-%d}")
    else:
        ax.set_xlabel(f"Upload time (UTC), {low:%Y-%m-%d} to {high:%Y-%m-%d}")
    # Few, compact date labels in UTC, so that they do not overlap at phone width.
    # minticks=2: with 3, some spans of two or three days leave matplotlib no interval that fits (it
    # warns). matplotlib.dates has no type annotations, hence the ignores.
    locator = mdates.AutoDateLocator(tz=UTC, minticks=2, maxticks=6)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    formatter = mdates.ConciseDateFormatter(locator, tz=UTC, show_offset=False)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_formatter(formatter)
    title = f"Best {metric} over time"
    if len(series) > len(shown):
        title += f" (top {len(shown)} of {len(series)})"
    ax.set_title(title)
    figure.legend(loc="outside lower center", ncols=1, frameon=False)


def progress_chart(
    candidates: Iterable[Candidate],
    rules: Rules,
    *,
    metric_label: str | None = None,
    until: datetime | None = None,
    column: Column | None = None,
) -> bytes:
    """SVG of the best primary score over time, one step line per team (dashed for baselines).

    Lines run to ``until`` (default: the last upload shown); at most ``MAX_SERIES`` entrants, best first.
    ``column``: the primary metric's column, whose format the axis follows (default: a fraction, in percent).
    """
    series = progress_series(candidates, rules)
    fraction = column.fraction if column is not None else True
    return _draw(_progress_figure, series, label(metric_label or rules.primary, METRIC_LIMIT), until, fraction)


def progress_alt_text(
    candidates: Iterable[Candidate], rules: Rules, *, metric_label: str | None = None, column: Column | None = None
) -> str:
    """What the progress chart shows, in one or two sentences, its numbers written as the table writes them."""
    series = progress_series(candidates, rules)
    metric = metric_label or rules.primary
    if not series:
        return f"Chart of the best {metric} over time: no scored submissions yet."
    leader = series[0]
    moment = leader.points[-1][0].strftime("%Y-%m-%d %H:%M UTC")
    shown = min(len(series), MAX_SERIES)
    best = column.format(leader.best) if column is not None else percent(leader.best)
    unit = "%" if column is None or column.fraction else ""
    return (
        f"Step chart of the best {metric} over time for {shown} of {len(series)} entrants. "
        f"Leading: {label(leader.label)} with {best}{unit}, reached {moment}."
    )


# -- (b) per-document scores of one submission ------------------------------------------------------------


def document_scores(
    breakdown: Mapping[str, Mapping[str, Mapping[str, Any]]], metric: str, dimension: str = "document"
) -> dict[str, float]:
    """``{document: value}`` of one metric from a stored breakdown; documents without a value are left out."""
    out = {}
    for key in sorted(breakdown.get(dimension, {}), key=natural_key):
        value = metric_value(breakdown[dimension][key], metric)
        if value is not None:
            out[key] = value
    return out


def _sorted_scores(scores: Mapping[str, float], higher_is_better: bool) -> list[tuple[str, float]]:
    """Best first; equal scores in natural order of the document id."""
    items = sorted(scores.items(), key=lambda kv: natural_key(kv[0]))
    return sorted(items, key=lambda kv: -kv[1] if higher_is_better else kv[1])


def _shown_bars(ordered: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """At most ``MAX_BARS``: the best and the worst halves when there are more."""
    if len(ordered) <= MAX_BARS:
        return ordered
    half = MAX_BARS // 2
    return ordered[:half] + ordered[-(MAX_BARS - half) :]


def _documents_figure(figure: Figure, ordered: list[tuple[str, float]], metric: str, total: int) -> None:
    shown = _shown_bars(ordered)
    figure.set_size_inches(WIDTH_INCHES, 1.3 + 0.24 * max(len(shown), 1))
    ax = figure.add_subplot()
    ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    ax.set_xlabel(metric)
    ax.grid(True, axis="x", alpha=0.3)
    if not shown:
        ax.text(0.5, 0.5, "No per-document scores", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
        return
    positions = list(range(len(shown)))
    bars = ax.barh(positions, [v for _, v in shown], height=0.7)
    ax.bar_label(bars, labels=[percent(v) for _, v in shown], padding=2, fontsize=9)
    ax.set_yticks(positions, labels=[label(k) for k, _ in shown])
    ax.invert_yaxis()  # best at the top
    top = max(1.0, max(v for _, v in shown))
    ax.set_xticks([top * i / 4 for i in range(5)])
    ax.set_xlim(0, top * 1.14)  # room for the value labels right of the longest bar
    title = f"{metric} per document"
    if len(shown) < total:
        ax.axhline(MAX_BARS // 2 - 0.5, color="grey", linestyle=":", linewidth=1)  # where documents are left out
        title += f" (best and worst {len(shown)} of {total})"
    ax.set_title(title)


def document_chart(scores: Mapping[str, float], *, metric: str, higher_is_better: bool = True) -> bytes:
    """SVG of one submission's per-document scores: horizontal bars, best at the top."""
    ordered = _sorted_scores(scores, higher_is_better)
    return _draw(_documents_figure, ordered, label(metric, METRIC_LIMIT), len(ordered))


def document_alt_text(scores: Mapping[str, float], *, metric: str, higher_is_better: bool = True) -> str:
    """What the per-document chart shows, in one sentence."""
    ordered = _sorted_scores(scores, higher_is_better)
    if not ordered:
        return f"Bar chart of {metric} per document: no per-document scores."
    (best_key, best), (worst_key, worst) = ordered[0], ordered[-1]
    return (
        f"Bar chart of {metric} for {len(ordered)} documents, "
        f"from {percent(best)}% ({label(best_key)}) to {percent(worst)}% ({label(worst_key)})."
    )
