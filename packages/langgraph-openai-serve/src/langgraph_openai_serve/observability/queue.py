"""The background queue: depth and age read at scrape time, waits, re-runs.

``lgos_background_jobs`` and ``lgos_background_oldest_ready_seconds`` are
read from the queue when ``/metrics`` is scraped (``QueueStats`` from the
backend: PostgreSQL's queue table, or this process's tasks), never kept up
to date on the request path. Queue waits are observed when a worker starts
a job's first run; re-runs when a job goes back on the queue; worker
restarts when a worker takes jobs again after a database outage.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

QUEUE_WAIT = Histogram(
    "lgos_background_queue_wait_seconds",
    "Seconds from a background Response's submission to a worker starting its "
    "first run.",
    ["model"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
)
RERUNS = Counter(
    "lgos_background_reruns",
    "Background runs put back on the queue to run again: handed back by a "
    "stopping worker, taken from a worker that stopped answering (stalled), or "
    "stopped by a database fault (database).",
    ["reason"],
)
RerunReason = Literal["handed_back", "stalled", "database"]
_RERUNS = {
    reason: RERUNS.labels(reason) for reason in ("handed_back", "stalled", "database")
}
WORKER_RESTARTS = Counter(
    "lgos_background_worker_restarts",
    "Times a worker process started taking jobs again after the database "
    "took its queue worker down (its heartbeat or listener lost the database "
    "for longer than LGOS_QUEUE_DATABASE_WAIT).",
)
_waits: dict[str, Any] = {}


def rerun(reason: RerunReason, count: int = 1) -> None:
    _RERUNS[reason].inc(count)


def worker_restarted() -> None:
    WORKER_RESTARTS.inc()


def queue_waited(model: str, seconds: float) -> None:
    child = _waits.get(model)
    if child is None:
        child = _waits[model] = QUEUE_WAIT.labels(model)
    child.observe(seconds)


@dataclass(frozen=True, slots=True)
class QueueStats:
    """The queue as it is now."""

    ready: int
    """Jobs waiting for a worker (not those scheduled for later)."""
    running: int
    oldest_ready_seconds: float
    """Age of the oldest waiting job (0 when none waits)."""


QueueProbe = Callable[[], Awaitable[QueueStats]]


def queue_families(stats: QueueStats) -> list[GaugeMetricFamily]:
    jobs = GaugeMetricFamily(
        "lgos_background_jobs",
        "Background jobs on the queue now, waiting (ready) or running.",
        labels=["state"],
    )
    jobs.add_metric(["ready"], stats.ready)
    jobs.add_metric(["running"], stats.running)
    oldest = GaugeMetricFamily(
        "lgos_background_oldest_ready_seconds",
        "Seconds the oldest waiting background job has waited (0: none waits).",
        value=stats.oldest_ready_seconds,
    )
    return [jobs, oldest]
