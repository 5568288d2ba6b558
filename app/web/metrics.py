"""Prometheus metrics, computed from the database (and the broker) when Prometheus scrapes.

Why not counters and histograms updated as things happen: a score is written by a worker, which
is another process and usually another machine than the web tier that Prometheus scrapes. The
client library's multiprocess mode only merges processes of one machine through a shared folder,
so it cannot see scores written elsewhere. The database sees every one of them, so each scrape
asks it: every web process reports the same numbers (take ``max`` over instances, not ``sum``),
and a restart loses nothing. Each query is cheap: a ``COUNT ... GROUP BY`` on an indexed column,
and the newest scores read through the primary key.

Metrics (gauges, and three counters that the sweepers keep in the database):

- ``podium_up_database`` 1 when the database answered this scrape;
- ``podium_submissions{status}`` submissions by status;
- ``podium_queue_depth{queue}`` jobs waiting in the database (queued submissions on ``scoring``,
  queued baseline runs on ``gpu``);
- ``podium_broker_up`` and ``podium_broker_queue_messages{queue}`` in the distributed mode;
- ``podium_upload_to_score_seconds{quantile}`` over the last ``SAMPLE`` submissions scored, with
  ``podium_upload_to_score_sample_size``;
- ``podium_scoring_seconds{scorer}`` the mean time one scoring took lately, and
  ``podium_scoring_workers`` the workers that scored lately (``app.services.jobs.queue_stats``);
- ``podium_jobs_resumed_total{kind}`` jobs sent again because their worker died,
  ``podium_jobs_resent_total{kind}`` jobs sent again because their message never left or was lost,
  and ``podium_broker_loss_detections_total``, times the broker was found without its marker
  (``app.services.jobs.counters``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.services.jobs import counters, queue_stats
from app.services.jobs.registry import KINDS
from app.storage.models import SubmissionStatus
from app.storage.types import utcnow
from app.web.state import AppState

#: How many of the newest scored submissions the upload-to-score quantiles cover.
SAMPLE = 1000
QUANTILES = (0.5, 0.9, 0.99)
#: Longest a scrape waits for the database, and for the broker.
READ_SECONDS = 5.0

Probe = Callable[[Callable[[], Any], float], str | None]


def nearest_rank(ordered: list[float], q: float) -> float:
    """The ``q`` quantile of sorted values by the nearest-rank rule (no interpolation)."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


class PodiumCollector(Collector):
    """Reads the numbers at each scrape (see the module's docstring)."""

    def __init__(self, state: AppState, *, probe: Probe) -> None:
        self.state = state
        self.probe = probe

    def collect(self) -> Iterator[Metric]:
        read: dict[str, Any] = {}

        def from_database() -> None:
            with self.state.db.session(read_only=True) as session:
                read["status"] = queue_stats.submissions_by_status(session)
                read["queued"] = queue_stats.queued_by_queue(session)
                read["latency"] = sorted(queue_stats.upload_to_score_seconds(session, sample=SAMPLE))
                read["pace"] = queue_stats.recent_pace(session, utcnow())
                read["counters"] = counters.totals(session)

        database_up = self.probe(from_database, READ_SECONDS) is None
        yield GaugeMetricFamily(
            "podium_up_database", "1 when the database answered this scrape", value=int(database_up)
        )
        if database_up:
            yield from self._database_metrics(read)
        if self.state.broker is not None:
            yield from self._broker_metrics()

    def _database_metrics(self, read: dict[str, Any]) -> Iterator[Metric]:
        by_status = GaugeMetricFamily("podium_submissions", "Submissions by status", labels=["status"])
        for status in SubmissionStatus:
            by_status.add_metric([status], read["status"].get(status, 0))
        yield by_status
        depth = GaugeMetricFamily("podium_queue_depth", "Jobs waiting in the database, per queue", labels=["queue"])
        for queue, count in sorted(read["queued"].items()):
            depth.add_metric([queue], count)
        yield depth
        latency: list[float] = read["latency"]
        quantiles = GaugeMetricFamily(
            "podium_upload_to_score_seconds",
            f"Seconds from upload to score, over the last {SAMPLE} submissions scored",
            labels=["quantile"],
        )
        for q in QUANTILES if latency else ():
            quantiles.add_metric([f"{q:g}"], nearest_rank(latency, q))
        yield quantiles
        yield GaugeMetricFamily(
            "podium_upload_to_score_sample_size", "Submissions the upload-to-score quantiles cover", value=len(latency)
        )
        pace: queue_stats.Pace = read["pace"]
        seconds = GaugeMetricFamily("podium_scoring_seconds", "Mean seconds one scoring took lately", labels=["scorer"])
        for scorer, mean in sorted(pace.seconds_by_scorer.items()):
            seconds.add_metric([scorer], mean)
        yield seconds
        yield GaugeMetricFamily(
            "podium_scoring_workers", "Workers that scored lately or hold a job", value=pace.workers
        )
        yield from self._counters(read["counters"])

    def _counters(self, totals: dict[tuple[str, str], int]) -> Iterator[Metric]:
        for name, text in (
            (counters.RESUMED, "Jobs sent again because their worker died (lease expired)"),
            (counters.RESENT, "Jobs sent again because their message never left or was lost with the broker"),
        ):
            family = CounterMetricFamily(f"podium_jobs_{name}", text, labels=["kind"])
            for kind in KINDS:
                family.add_metric([kind.name], totals.get((name, kind.name), 0))
            yield family
        yield CounterMetricFamily(
            "podium_broker_loss_detections",
            "Times a sweeper found the broker without its marker (it had lost its messages)",
            value=totals.get((counters.BROKER_LOSSES, ""), 0),
        )

    def _broker_metrics(self) -> Iterator[Metric]:
        broker = self.state.broker
        assert broker is not None
        lengths: dict[str, int] = {}
        up = self.probe(lambda: lengths.update(broker.queue_lengths()), READ_SECONDS) is None
        yield GaugeMetricFamily("podium_broker_up", "1 when the broker answered this scrape", value=int(up))
        messages = GaugeMetricFamily("podium_broker_queue_messages", "Messages waiting in the broker", labels=["queue"])
        for queue, count in sorted(lengths.items()):
            messages.add_metric([queue], count)
        yield messages
