"""Fair share under contention (issue 46), on real processes.

``lgos-bench fairshare`` runs the issue's setup: PostgreSQL, SeaweedFS and
the Files API (``batches.batch_stack``), one ``lgos serve`` (with
``LGOS_MAX_RUNS``) and one ``lgos worker`` with ``slots`` slots
(``LGOS_BACKGROUND_CONCURRENCY``), everything else at its defaults. Three
tenants share it (``fairshare_load``): A sends large batches, B background
Responses, C a small batch; every run and every batch line is the wait
graph (``workload.wait_graph``: ``wait_s`` like a model call). Phases, each
on an idle fleet, each waiting for all it started to end:

- ``waits``: B submits ``samples`` runs, one every ``every`` s, on an idle
  worker, then while one of A's ``lines``-line batches runs, then while two
  do (B starts two runs' time after A's first batch is ``in_progress``, so
  its lines hold the slots). B's wait: the submission sent to its node's
  start; the worker's ``lgos_background_queue_wait_seconds`` beside it.
- ``small``: C's ``small_lines``-line batch alone, then created
  ``small_after_s`` after A's batch went ``in_progress``: its total time
  and its time in ``validating``.
- ``bulk``: A's batch alone, then beside B's runs (one every ``every`` s
  for as long as it runs) and C's small batch: the ratio of its times.
- ``burst``: streamed Responses of the plain graph (``burst_tokens``
  tokens, CPU-bound) from one tenant, alternately ``max_runs`` at once
  (unloaded) and 3 x ``max_runs`` (over ``LGOS_MAX_RUNS``), ``burst_rounds``
  times: each refusal's latency, the accepted ones' p99 against the
  unloaded p99.

``python`` runs the ``lgos`` processes with another checkout's interpreter
(that checkout's ``lgos_bench.lgos_app`` serves the graphs), so one bench
measures the library before and after; a setting an old tree does not know
is ignored by it (that is the before).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from lgos_bench import fairshare_report
from lgos_bench.batches import BatchEnd, Stack, batch_stack
from lgos_bench.fairshare_load import (
    BULK,
    INTERACTIVE,
    SMALL,
    Answer,
    Clients,
    Following,
    Log,
    api_keys,
    burst,
)
from lgos_bench.fairshare_report import batch_record, interactive, worker_wait
from lgos_bench.fleet import fleet_folder
from lgos_bench.scale import REGISTRY
from lgos_bench.suite import (
    background_cores,
    core_commit,
    interpreter_tree,
    library_revision,
    run_meta,
)
from lgos_bench.workload import GATES_ENV, Workload

PHASES = ("waits", "small", "bulk", "burst")
BURST_GAP = 0.3
"""Seconds between two bursts: every stream of the last one has ended."""


@dataclass(frozen=True, slots=True)
class Plan:
    phases: tuple[str, ...] = PHASES
    lines: int = 120
    """A's batch."""
    small_lines: int = 4
    """C's batch."""
    samples: int = 10
    """B's runs in each part of ``waits``."""
    every: float = 1.5
    """Seconds between two of B's submissions."""
    wait_s: float = 1.0
    """A run's (and a batch line's) time: the wait graph's model call."""
    slots: int = 4
    max_runs: int = 8
    burst_rounds: int = 10
    burst_tokens: int = 128

    def __post_init__(self) -> None:
        unknown = [name for name in self.phases if name not in PHASES]
        if unknown or not self.phases:
            raise ValueError(
                f"unknown phases {', '.join(unknown) or '(none given)'}: "
                f"choose from {', '.join(PHASES)}"
            )
        sizes = (self.lines, self.small_lines, self.samples, self.burst_rounds)
        if min(sizes) < 1 or min(self.every, self.wait_s) <= 0:
            raise ValueError("sizes must be at least 1 and times positive")

    @property
    def settle_s(self) -> float:
        """From A's batch going ``in_progress`` to B's first submission: two
        lines' time, so its lines hold every slot B could take."""
        return 2 * self.wait_s

    @property
    def small_after_s(self) -> float:
        """From A's batch going ``in_progress`` to C creating its own: three
        lines' time (3 s as the issue measured)."""
        return 3 * self.wait_s


def _origin_record(
    end: BatchEnd, following: Following, origin: float
) -> dict[str, Any]:
    return batch_record(end, following.tenant.name, following.lines, origin)


async def _beside_bulk(
    clients: Clients, plan: Plan, batches: int, log: Log
) -> dict[str, Any]:
    """B's runs on an idle worker (``batches`` 0) or beside A's batches."""
    origin = time.time()
    before = await clients.queue_waits()
    bulk = [clients.start_batch(BULK, plan.lines) for _ in range(batches)]
    if bulk:
        await bulk[0].started()
        await asyncio.sleep(plan.settle_s)
    log(f"waits: {plan.samples} runs of B beside {batches} batch(es) of A")
    samples = await clients.interactive(INTERACTIVE, plan.every, count=plan.samples)
    after = await clients.queue_waits()
    ended = [(await following.task, following) for following in bulk]
    return {
        "batches_of_a": batches,
        "interactive": interactive(samples),
        "worker_wait": worker_wait(before, after),
        "batches": [_origin_record(end, f, origin) for end, f in ended],
    }


async def waits(clients: Clients, plan: Plan, log: Log) -> dict[str, Any]:
    return {
        key: await _beside_bulk(clients, plan, batches, log)
        for key, batches in (("idle", 0), ("one_batch", 1), ("two_batches", 2))
    }


async def small(clients: Clients, plan: Plan, log: Log) -> dict[str, Any]:
    log(f"small: C's {plan.small_lines}-line batch alone")
    origin = time.time()
    alone = clients.start_batch(SMALL, plan.small_lines)
    alone_record = _origin_record(await alone.task, alone, origin)
    log(f"small: C's batch beside A's {plan.lines}-line batch")
    origin = time.time()
    bulk = clients.start_batch(BULK, plan.lines)
    await bulk.started()
    await asyncio.sleep(plan.small_after_s)
    beside = clients.start_batch(SMALL, plan.small_lines)
    small_end, bulk_end = await beside.task, await bulk.task
    return {
        "alone": alone_record,
        "beside": {
            "small": _origin_record(small_end, beside, origin),
            "bulk": _origin_record(bulk_end, bulk, origin),
        },
    }


async def bulk(clients: Clients, plan: Plan, log: Log) -> dict[str, Any]:
    log(f"bulk: A's {plan.lines}-line batch alone")
    origin = time.time()
    alone = clients.start_batch(BULK, plan.lines)
    alone_record = _origin_record(await alone.task, alone, origin)
    log("bulk: A's batch beside B's runs and C's batch")
    origin = time.time()
    bulk_batch = clients.start_batch(BULK, plan.lines)
    ended = asyncio.Event()
    bulk_batch.task.add_done_callback(lambda _: ended.set())
    await bulk_batch.started()
    runs = asyncio.create_task(
        clients.interactive(INTERACTIVE, plan.every, until=ended)
    )
    await asyncio.sleep(plan.small_after_s)
    beside = clients.start_batch(SMALL, plan.small_lines)
    bulk_end, small_end, samples = await bulk_batch.task, await beside.task, await runs
    return {
        "alone": alone_record,
        "beside": {
            "bulk": _origin_record(bulk_end, bulk_batch, origin),
            "small": _origin_record(small_end, beside, origin),
            "interactive": interactive(samples),
        },
    }


def _bursts(base: str, plan: Plan) -> tuple[list[Answer], list[Answer]]:
    """One request (the first pays for imports), then the rounds: unloaded,
    then over the limit."""
    size, over = plan.max_runs, 3 * plan.max_runs
    (warm,) = burst(base, INTERACTIVE, 1)
    if warm.status != 200:
        raise RuntimeError(f"the burst's warm-up request answered {warm.status}")
    unloaded, loaded = [], []
    for _ in range(plan.burst_rounds):
        unloaded += burst(base, INTERACTIVE, size)
        time.sleep(BURST_GAP)
        loaded += burst(base, INTERACTIVE, over)
        time.sleep(BURST_GAP)
    return unloaded, loaded


async def admission_burst(clients: Clients, plan: Plan, log: Log) -> dict[str, Any]:
    size = plan.max_runs
    log(f"burst: {plan.burst_rounds} rounds of {size} then {3 * size} streams")
    unloaded, loaded = await asyncio.to_thread(_bursts, clients.base, plan)
    return {
        "max_runs": size,
        "unloaded": [asdict(answer) for answer in unloaded],
        "loaded": [asdict(answer) for answer in loaded],
    }


RUNNERS = {"waits": waits, "small": small, "bulk": bulk, "burst": admission_burst}


async def _warm(clients: Clients, log: Log) -> None:
    """One run of B and a one-line batch of C, not counted: the first of
    each pays for imports and connections."""
    log("warming up: one background run, one one-line batch")
    sample = await clients.background(INTERACTIVE)
    if sample.status != "completed":
        raise RuntimeError(f"the warm-up run ended {sample.status}")
    end = await clients.start_batch(SMALL, 1).task
    if end.status != "completed":
        raise RuntimeError(f"the warm-up batch ended {end.status}")


async def drive(stack: Stack, plan: Plan, log: Log) -> dict[str, Any]:
    fleet = stack.fleet
    processes = {"lgos serve": fleet.started_apis[0].process}
    processes["lgos worker"] = fleet.started_workers[0]
    metrics = fleet.worker_health[0].replace("/health/ready", "/metrics")
    measured: dict[str, Any] = {"exits": []}
    async with httpx.AsyncClient(timeout=120) as http:
        clients = Clients(stack, http, processes, metrics)
        await _warm(clients, log)
        for name in plan.phases:
            measured[name] = await RUNNERS[name](clients, plan, log)
            measured["exits"] = clients.exited()
            if measured["exits"]:
                log(f"after {name}: {measured['exits']} exited; stopping")
                break
    return measured


def run(
    log: Log,
    plan: Plan = Plan(),
    *,
    python: str | None = None,
    logs: Path | None = None,
) -> dict[str, Any]:
    began = time.monotonic()
    label, package = interpreter_tree(python)
    settings = {
        "LGOS_API_KEYS": json.dumps(api_keys()),
        "LGOS_BACKGROUND_CONCURRENCY": str(plan.slots),
    }
    api_settings = {"LGOS_MAX_RUNS": str(plan.max_runs)}
    meta = run_meta(
        "fairshare",
        lgos_revision=library_revision(package),
        lgos_core_commit=core_commit(package),
        lgos_python=label,
        load_average_before=os.getloadavg()[0],
        plan={
            **asdict(plan),
            "settle_s": plan.settle_s,
            "small_after_s": plan.small_after_s,
        },
        settings={
            **{k: v for k, v in settings.items() if k != "LGOS_API_KEYS"},
            **api_settings,
        },
    )
    with fleet_folder(logs, "fairshare") as folder:
        gates = folder / "gates"  # the wait graph's; no run here holds a slot
        gates.mkdir(exist_ok=True)
        workload = Workload(tokens=plan.burst_tokens, wait_seconds=plan.wait_s)
        with batch_stack(
            folder,
            log,
            owners=api_keys(),
            apis=0,
            registry=REGISTRY,
            workload=workload,
            env={**settings, GATES_ENV: str(gates)},
            python=python,
        ) as stack:
            stack.fleet.start_api(api_settings)
            stack.fleet.start_worker()
            log(f"the fleet is up ({label})")
            measured = asyncio.run(drive(stack, plan, log))
    meta["background_cores_after"] = round(background_cores(), 2)
    meta["load_average_after"] = os.getloadavg()[0]
    meta["wall_seconds"] = round(time.monotonic() - began, 1)
    if logs is not None:
        meta["logs"] = str(logs)
    return fairshare_report.results(meta, measured)


def render(results: dict[str, Any]) -> str:
    return fairshare_report.render(results)


def write(results: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    return fairshare_report.write(results, directory)
