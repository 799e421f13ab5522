"""How a fleet scales: background runs per second with 1, 2 and 4 workers,
queue wait at a fixed arrival rate, foreground requests per second with 1
and 2 API processes.

``lgos-bench scale`` starts one throwaway fleet (``fleet.py``): PostgreSQL,
two ``lgos serve`` and four ``lgos worker`` processes (each running
``CONCURRENCY`` runs at once), nothing pinned. The background graph waits
like a model call (1 s) and answers which worker ran it and when its node
started and ended (``workload.wait_graph``).

Built to hold on a machine other processes keep busy:

- **Nothing but the runs in the measured window.** Every worker slot is
  first filled with a run that holds it (``hold``); the measured runs are
  submitted behind them, then the chosen workers are freed at once. The
  submissions' CPU, process starts and imports stay outside the window; the
  other workers stay up, held and idle, so every worker count runs beside
  the same processes.
- **Steady state, continuously.** The window runs from the moment every
  freed slot has started a measured run to the last start (the queue is
  never empty in it). Throughput is slots x the share of that window the
  slots spent inside a node / the node's mean time: no wave boundaries to
  count, no tail. What a slot spends between runs is LGOS's overhead per
  run (taking the job, storing the Response and its events, the checkpoint).
- **Interleaved.** Worker counts run 1, 2, 4, 4, 2, 1 and are pooled, so a
  change in the machine's load hits each count alike; the cores other
  processes used are read from ``/proc`` during every window.

Queue wait: two workers free, runs arriving at a fixed rate (half their
capacity) through both API processes; the wait is the client sending its
request to the run's node starting. Foreground: streamed Responses of the
plain graph (64 tokens, CPU-bound) at concurrency 16 split over 1, then 2
``lgos serve`` processes, rounds 1, 2, 2, 1; with CPU-bound requests on a
busy machine this one measures the machine as much as LGOS.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx
import psycopg

from lgos_bench.background import summarize_ms
from lgos_bench.fleet import Fleet, Log, fleet
from lgos_bench.load import client_for, run_load, warm
from lgos_bench.procstat import cpu_seconds, machine_busy_seconds, process_tree
from lgos_bench.scale_report import (
    Run,
    background_summary,
    foreground_summary,
    steady,
)
from lgos_bench.scenarios import target
from lgos_bench.suite import background_cores, run_meta
from lgos_bench.workload import GATES_ENV, PLAIN, WAIT, Workload

REGISTRY = "lgos_bench.lgos_app:scale_registry"
WAIT_SECONDS = 1.0
CONCURRENCY = 4
"""Runs each worker executes at once (``LGOS_BACKGROUND_CONCURRENCY``)."""
WORKERS = 4
WORKER_ORDER = (1, 2, 4, 4, 2, 1)
WAVES = 8
"""Measured runs per slot: the window is about ``WAVES - 1`` run times."""
QUEUE_WORKERS = 2
QUEUE_LOAD = 0.5
"""The arrival rate as a share of the queue workers' capacity."""
QUEUE_SECONDS = 30.0
APIS = 2
API_ORDER = (1, 2, 2, 1)
FOREGROUND_CONCURRENCY = 16
FOREGROUND_SECONDS = 10.0
"""Per round of ``API_ORDER``."""
SUBMIT_AT_ONCE = 16
SUBMIT_ATTEMPTS = 3
POLL_SECONDS = 0.25
STALL_SECONDS = 120.0
TERMINAL = ["completed", "failed", "cancelled", "incomplete"]
_HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}


@contextmanager
def cpu_use(groups: dict[str, list[int]]) -> Iterator[dict[str, float]]:
    """CPU used while the block runs, filled in when it ends: each group's
    process trees (``<name>_cpu_s``), and the cores kept busy by the bench's
    own process tree (the fleet included) and by every other process."""
    own = process_tree(os.getpid())
    trees = {name: _tree(pids) for name, pids in groups.items()}
    figures: dict[str, float] = {}
    began, machine, ours = time.monotonic(), machine_busy_seconds(), cpu_seconds(own)
    before = {name: cpu_seconds(pids) for name, pids in trees.items()}
    yield figures
    elapsed = time.monotonic() - began
    used = cpu_seconds(own) - ours
    figures["other_cores"] = (machine_busy_seconds() - machine - used) / elapsed
    figures["own_cores"] = used / elapsed
    for name, pids in trees.items():
        figures[f"{name}_cpu_s"] = cpu_seconds(pids) - before[name]


def _tree(pids: list[int]) -> list[int]:
    return [child for pid in pids for child in process_tree(pid)]


class Bench:
    """The running fleet as the bench drives it: submissions round robin
    over the API processes, runs read back from PostgreSQL, the gates of
    the held runs (``workload.wait_graph``)."""

    def __init__(self, running: Fleet, gates: Path, http: httpx.AsyncClient) -> None:
        self.fleet = running
        self.gates = gates
        self.http = http
        self.bases = list(running.apis)
        self._next = 0
        self._slots = asyncio.Semaphore(SUBMIT_AT_ONCE)

    async def submit(self, text: str) -> tuple[str, float, float]:
        """One background run of the wait graph: its id, when it was sent
        and when it was accepted. A connection the API closed as it was
        reused (its keep-alive timing out while the bench waited) is retried
        under the same ``Idempotency-Key``, so it stays one run."""
        base = self.bases[self._next % len(self.bases)]
        self._next += 1
        headers = {**_HEADERS, "idempotency-key": uuid.uuid4().hex}
        body = {"model": WAIT, "input": text, "background": True}
        async with self._slots:
            sent = time.time()
            for attempt in range(SUBMIT_ATTEMPTS):
                try:
                    answer = await self.http.post(
                        f"{base}/responses", json=body, headers=headers
                    )
                    break
                except httpx.TransportError:
                    if attempt == SUBMIT_ATTEMPTS - 1:
                        raise
            answer.raise_for_status()
            return str(answer.json()["id"]), sent, time.time()

    async def submit_many(
        self, text: str, count: int
    ) -> list[tuple[str, float, float]]:
        return list(await asyncio.gather(*(self.submit(text) for _ in range(count))))

    async def hold_every_slot(self, tag: str) -> tuple[list[str], list[int]]:
        """Fill every worker slot with a run holding it; their ids and the
        workers' PIDs (as the runs saw them)."""
        slots = WORKERS * CONCURRENCY
        held = await self.submit_many(f"hold {tag}", slots)
        await _until(lambda: len(self._held(tag)) == slots, f"{slots} held slots")
        pids = sorted(set(self._held(tag)))
        if len(pids) != WORKERS:
            raise RuntimeError(f"{WORKERS} workers hold {slots} slots, saw {pids}")
        return [response_id for response_id, _, _ in held], pids

    def _held(self, tag: str) -> list[int]:
        return [int(p.name.split("-")[2]) for p in self.gates.glob(f"held-{tag}-*")]

    def free(self, tag: str, worker: int | str) -> None:
        """End the held runs of one worker (its PID) or of ``all``."""
        (self.gates / f"open-{tag}-{worker}").touch()

    async def ended(self, ids: list[str], what: str) -> dict[str, str]:
        """Wait until every run ended (failing only when none ends for
        ``STALL_SECONDS``); each completed run's answer."""
        url = self.fleet.database.url
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            done, best, since = 0, -1, time.monotonic()
            while done < len(ids):
                cursor = await conn.execute(
                    "SELECT count(*) FROM lgos_background_responses "
                    "WHERE id = ANY(%s) AND snapshot->>'status' = ANY(%s)",
                    (ids, TERMINAL),
                )
                row = await cursor.fetchone()
                done = int(row[0]) if row else 0
                if done > best:
                    best, since = done, time.monotonic()
                elif time.monotonic() - since > STALL_SECONDS:
                    raise RuntimeError(
                        f"{what}: runs stopped ending ({done}/{len(ids)})"
                    )
                await asyncio.sleep(POLL_SECONDS)
            cursor = await conn.execute(
                "SELECT id, snapshot->>'status', snapshot->'output' "
                "FROM lgos_background_responses WHERE id = ANY(%s)",
                (ids,),
            )
            rows = await cursor.fetchall()
        answers = {}
        for response_id, status, output in rows:
            if status != "completed":
                raise RuntimeError(f"{what}: {response_id} ended {status}")
            answers[response_id] = output[-1]["content"][0]["text"]
        return answers

    async def runs(
        self, submitted: list[tuple[str, float, float]], what: str
    ) -> list[Run]:
        answers = await self.ended([rid for rid, _, _ in submitted], what)
        runs = []
        for response_id, sent, accepted in submitted:
            worker, started, ended = answers[response_id].split()
            runs.append(Run(int(worker), sent, accepted, float(started), float(ended)))
        return runs


async def _until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + STALL_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {what} after {STALL_SECONDS:g} s")
        await asyncio.sleep(POLL_SECONDS)


async def background_round(
    bench: Bench, workers: int, number: int, waves: int, log: Log
) -> dict[str, Any]:
    tag = f"b{number}"
    slots = workers * CONCURRENCY
    holders, pids = await bench.hold_every_slot(tag)
    measured = await bench.submit_many("wait", slots * waves)
    log(f"background round {number}: {workers} worker(s), {len(measured)} runs")
    # A different worker first each round: no one process's luck decides.
    first = number % len(pids)
    freed = sorted((pids + pids)[first : first + workers])
    # The fleet started this PostgreSQL, so it knows the server's PID.
    postgres = [pid] if (pid := bench.fleet.database.pid) is not None else []
    groups = {"workers": freed, "postgres": postgres}
    with cpu_use(groups) as cpu:
        for pid in freed:
            bench.free(tag, pid)
        runs = await bench.runs(measured, f"round {number}")
    bench.free(tag, "all")
    await bench.ended(holders, f"round {number}'s held runs")
    ran_on = sorted({run.worker for run in runs})
    if ran_on != freed:
        raise RuntimeError(f"round {number}: runs on {ran_on}, freed {freed}")
    window = steady(runs, slots)
    if window is None:
        raise RuntimeError(f"round {number}: no steady window")
    return {
        "workers": workers,
        **asdict(window),
        # The freed slots' held runs ended in the window too: runs as well.
        **_per_run(cpu, len(runs) + slots),
        "other_cores": cpu["other_cores"],
        "own_cores": cpu["own_cores"],
    }


def _per_run(cpu: dict[str, float], count: int) -> dict[str, float]:
    """CPU ms per run of the workers and of PostgreSQL."""
    return {
        "worker_cpu_ms_per_run": cpu["workers_cpu_s"] * 1000 / count,
        "postgres_cpu_ms_per_run": cpu["postgres_cpu_s"] * 1000 / count,
    }


async def queue_wait(
    bench: Bench, wait: float, seconds: float, log: Log
) -> dict[str, Any]:
    holders, pids = await bench.hold_every_slot("q")
    for pid in pids[:QUEUE_WORKERS]:
        bench.free("q", pid)
    await _freed(bench, holders, QUEUE_WORKERS * CONCURRENCY)
    rate = QUEUE_LOAD * QUEUE_WORKERS * CONCURRENCY / wait
    log(f"queue wait: {rate:g} runs/s for {seconds:g} s on {QUEUE_WORKERS} workers")
    with cpu_use({}) as cpu:
        began, pending = time.monotonic(), []
        for index in range(round(rate * seconds)):
            await asyncio.sleep(max(0.0, began + index / rate - time.monotonic()))
            pending.append(asyncio.create_task(bench.submit("wait")))
        submitted = list(await asyncio.gather(*pending))
        runs = await bench.runs(submitted, "queue wait")
    bench.free("q", "all")
    await bench.ended(holders, "the queue wait's held runs")
    return {
        "workers": QUEUE_WORKERS,
        "arrival_per_s": rate,
        "runs": len(runs),
        "wait_ms": summarize_ms([run.started - run.submitted for run in runs]),
        "accepted_ms": summarize_ms([run.accepted - run.submitted for run in runs]),
        "other_cores": cpu["other_cores"],
    }


async def _freed(bench: Bench, holders: list[str], count: int) -> None:
    """Until ``count`` of the held runs completed."""
    url = bench.fleet.database.url
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:

        async def completed() -> int:
            cursor = await conn.execute(
                "SELECT count(*) FROM lgos_background_responses "
                "WHERE id = ANY(%s) AND snapshot->>'status' = 'completed'",
                (holders,),
            )
            row = await cursor.fetchone()
            return int(row[0]) if row else 0

        deadline = time.monotonic() + STALL_SECONDS
        while await completed() < count:
            if time.monotonic() > deadline:
                raise RuntimeError("the freed workers' held runs did not end")
            await asyncio.sleep(POLL_SECONDS)


async def foreground_round(bench: Bench, apis: int, seconds: float) -> dict[str, Any]:
    plain = target("responses", PLAIN, stream=True)
    share = FOREGROUND_CONCURRENCY // apis
    bases = bench.bases[:apis]
    clients = [client_for(share) for _ in bases]
    pids = [api.process.pid for api in bench.fleet.started_apis[:apis]]
    try:
        for client, base in zip(clients, bases, strict=True):
            await warm(client, base, plain, share)
        own_before = time.process_time()
        with cpu_use({"apis": pids}) as cpu:
            results = await asyncio.gather(
                *(
                    run_load(
                        client,
                        base,
                        plain,
                        concurrency=share,
                        max_requests=10**6,
                        max_seconds=seconds,
                    )
                    for client, base in zip(clients, bases, strict=True)
                )
            )
        own = time.process_time() - own_before
    finally:
        for client in clients:
            await client.aclose()
    return {
        "apis": apis,
        "requests": sum(len(result.samples) for result in results),
        "errors": sum(len(result.errors) for result in results),
        "elapsed_s": max(result.elapsed for result in results),
        "latencies_ms": [s.latency * 1000 for r in results for s in r.samples],
        "server_cpu_s": cpu["apis_cpu_s"],
        "client_cpu_s": own,
        "other_cores": cpu["other_cores"],
    }


async def _drive(
    running: Fleet, gates: Path, plan: dict[str, Any], log: Log
) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=120) as http:
        bench = Bench(running, gates, http)
        log("warm-up: every worker runs one wave")
        holders, _ = await bench.hold_every_slot("warm")
        bench.free("warm", "all")
        await bench.ended(holders, "warm-up")
        rounds = [
            await background_round(bench, workers, number, plan["waves"], log)
            for number, workers in enumerate(WORKER_ORDER)
        ]
        queue = await queue_wait(bench, plan["wait"], plan["queue_seconds"], log)
        foreground = []
        for apis in API_ORDER:
            log(f"foreground: {apis} API process(es)")
            foreground.append(
                await foreground_round(bench, apis, plan["foreground_seconds"])
            )
    return {
        "background_rounds": rounds,
        "queue": queue,
        "foreground_rounds": foreground,
    }


def run(
    log: Log,
    *,
    waves: int = WAVES,
    queue_seconds: float = QUEUE_SECONDS,
    foreground_seconds: float = FOREGROUND_SECONDS,
) -> dict[str, Any]:
    plan = {
        "wait": WAIT_SECONDS,
        "concurrency": CONCURRENCY,
        "workers": WORKERS,
        "worker_order": list(WORKER_ORDER),
        "waves": waves,
        "queue_seconds": queue_seconds,
        "api_order": list(API_ORDER),
        "foreground_concurrency": FOREGROUND_CONCURRENCY,
        "foreground_seconds": foreground_seconds,
    }
    meta = run_meta(
        "scale",
        cores=len(os.sched_getaffinity(0)),
        load_average_before=os.getloadavg()[0],
        plan=plan,
    )
    with tempfile.TemporaryDirectory(prefix="lgos-bench-scale-") as folder:
        gates = Path(folder) / "gates"
        gates.mkdir()
        workload = Workload(tokens=64, wait_seconds=WAIT_SECONDS)
        settings = {
            "LGOS_BACKGROUND_CONCURRENCY": str(CONCURRENCY),
            GATES_ENV: str(gates),
        }
        with fleet(
            Path(folder),
            log,
            apis=APIS,
            workers=WORKERS,
            registry=REGISTRY,
            workload=workload,
            env=settings,
        ) as running:
            measured = asyncio.run(_drive(running, gates, plan, log))
    meta["background_cores_after"] = round(background_cores(), 2)
    meta["load_average_after"] = os.getloadavg()[0]
    foreground = foreground_summary(measured["foreground_rounds"])
    for row in measured["foreground_rounds"]:
        del row["latencies_ms"]  # pooled in the summary; too long to keep
    return {
        "meta": meta,
        **measured,
        "background": background_summary(
            measured["background_rounds"], WAIT_SECONDS, CONCURRENCY
        ),
        "foreground": foreground,
    }
