"""``GET /metrics``: the Prometheus text format, by prometheus-client.

One process serves its own registry (with the library's process, platform
and garbage-collector metrics). Under ``lgos serve --workers N`` the CLI
gives every worker one ``PROMETHEUS_MULTIPROC_DIR``, and each scrape, on
whichever worker it lands, merges the files of all of them (the library's
multiprocess mode); the process metrics are then read for each live worker
and labelled with its ``pid``. The queue families are read from the queue
at scrape time (``queue.py``). ``_created`` series are off: they double
the series count and Prometheus does not need them.
"""

from __future__ import annotations

import asyncio
import glob
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, disable_created_metrics
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.process_collector import ProcessCollector

from langgraph_openai_serve.observability.queue import (
    QueueProbe,
    TenantClass,
    everyone_other,
    queue_families,
)

logger = logging.getLogger("langgraph_openai_serve")

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
QUEUE_READ_SECONDS = 5.0
_PID_FILE = re.compile(r"_(\d+)\.db$")

disable_created_metrics()  # type: ignore[no-untyped-call]


def multiprocess_dir() -> str | None:
    """The folder every process writes its metrics to, when several serve."""
    return os.environ.get(MULTIPROCESS_ENV) or None


class _Scrape:
    """One scrape: the registry's families, then the queue's."""

    def __init__(self, base: Any, extra: list[Metric]) -> None:
        self._base = base
        self._extra = extra

    def collect(self) -> Iterator[Metric]:
        yield from self._base.collect()
        yield from self._extra


class _WorkerProcesses:
    """The library's process metrics of every live worker, by ``pid``."""

    def __init__(self, path: str) -> None:
        self._path = path

    def collect(self) -> Iterator[Metric]:
        by_name: dict[str, Metric] = {}
        for pid in _live_pids(self._path):
            collector = ProcessCollector(pid=partial(int, pid), registry=None)
            for family in collector.collect():
                merged = by_name.get(family.name)
                if merged is None:
                    merged = by_name[family.name] = Metric(
                        family.name, family.documentation, family.type
                    )
                for sample in family.samples:
                    merged.add_sample(
                        sample.name, {**sample.labels, "pid": str(pid)}, sample.value
                    )
        yield from by_name.values()


def _live_pids(path: str) -> list[int]:
    """Pids with metric files whose process still runs; a dead worker's live
    gauges are dropped (its counters stay: they are totals)."""
    pids = set()
    for name in glob.glob(os.path.join(path, "*.db")):
        match = _PID_FILE.search(name)
        if match:
            pids.add(int(match.group(1)))
    live = []
    for pid in sorted(pids):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_process_dead(pid, path)  # type: ignore[no-untyped-call]
            continue
        except PermissionError:
            pass  # alive, another user's
        live.append(pid)
    return live


def _registry() -> Any:
    path = multiprocess_dir()
    if path is None:
        return REGISTRY
    registry = CollectorRegistry()
    registry.register(_WorkerProcesses(path))  # first: it drops dead gauges
    MultiProcessCollector(registry, path)  # type: ignore[no-untyped-call]
    return registry


async def render(
    accept: str,
    queue: QueueProbe | None = None,
    tenant_class: TenantClass = everyone_other,
) -> tuple[bytes, str]:
    """This process's (or every worker's) metrics in the format ``accept``
    asks for (Prometheus text unless OpenMetrics is asked), and its content
    type; ``queue`` reads the background queue (skipped, with a warning
    logged, when it cannot be read within 5 seconds)."""
    extra: list[Metric] = []
    if queue is not None:
        try:
            async with asyncio.timeout(QUEUE_READ_SECONDS):
                extra = list(queue_families(await queue(), tenant_class))
        except Exception:
            logger.warning("metrics.queue_unreadable", exc_info=True)
    encoder, content_type = choose_encoder(accept)
    return encoder(_Scrape(_registry(), extra)), content_type


@dataclass(frozen=True, slots=True)
class MetricsSource:
    """What one process's ``GET /metrics`` shows beyond its registry."""

    queue: QueueProbe | None = None
    """Reads the background queue at scrape time (``None``: no queue)."""
    tenant_class: TenantClass = everyone_other
    """The class a tenant's queued jobs are counted under."""

    async def render(self, accept: str) -> tuple[bytes, str]:
        return await render(accept, self.queue, self.tenant_class)
