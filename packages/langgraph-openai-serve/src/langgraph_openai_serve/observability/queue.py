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
class WorkCount:
    """The jobs of one kind of work and one tenant."""

    work: str
    """Its priority class: ``interactive``, ``step``, ``bulk`` (or ``other``)."""
    tenant: str
    """The tenant's scope (``""``: the deployment's own work)."""
    ready: int
    running: int


@dataclass(frozen=True, slots=True)
class QueueStats:
    """The queue as it is now."""

    ready: int
    """Jobs waiting for a worker (not those scheduled for later)."""
    running: int
    oldest_ready_seconds: float
    """Age of the oldest waiting job (0 when none waits)."""
    work: tuple[WorkCount, ...] = ()
    """The same jobs by kind of work and tenant."""


QueueProbe = Callable[[], Awaitable[QueueStats]]
TenantClass = Callable[[str], str]
"""The class a tenant's jobs are counted under in the metrics (a bounded
set the deployment configures; never the tenant's name by default)."""


def everyone_other(tenant: str) -> str:
    return "other"


def queue_families(
    stats: QueueStats, tenant_class: TenantClass = everyone_other
) -> list[GaugeMetricFamily]:
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
    return [jobs, oldest, _by_class(stats, tenant_class)]


def _by_class(stats: QueueStats, tenant_class: TenantClass) -> GaugeMetricFamily:
    counts: dict[tuple[str, str, str], int] = {}
    for count in stats.work:
        owner = tenant_class(count.tenant)
        for state, jobs in (("ready", count.ready), ("running", count.running)):
            key = (state, count.work, owner)
            counts[key] = counts.get(key, 0) + jobs
    family = GaugeMetricFamily(
        "lgos_background_tenant_jobs",
        "Jobs on the queue now, waiting (ready) or running, by kind of work "
        "(interactive: background Responses; step: batch steps, webhook "
        "deliveries; bulk: batch lines) and tenant class (LGOS_TENANT_LIMITS' "
        "class; other for the rest).",
        labels=["state", "work", "tenant_class"],
    )
    for (state, work, owner), jobs in sorted(counts.items()):
        family.add_metric([state, work, owner], jobs)
    return family
