"""What clients see while PostgreSQL goes away and comes back (issue 45).

``lgos-bench outage`` runs one ``lgos serve`` and two ``lgos worker``
processes (``fleet.py``) on a PostgreSQL it can break
(``lgos_testkit.postgres.FaultyPostgres``), with the background backend and
the response store on it, under a steady load (``outage_load``): a
background run submitted every 0.3 s, two clients sending stored
foreground Responses, readiness probed every 0.25 s. Then, one phase after
another on the same fleet, each a steady period, a fault and a recovery:

- ``reset``: every client connection terminated, three times 2 s apart (a
  failover or a pooler restart, as clients see it);
- ``refuse``: connections refused for ``fault_s`` (default 15 s);
- ``stall``: the server's processes stopped (SIGSTOP) for ``fault_s``: a
  partition, where nothing answers and nothing errors;
- ``restart``: a fast shutdown and a start on the same port and data.

A fault runs in a thread (the faults are blocking calls) and stamps its own
start and end; the recovery lasts at least ``recovery_s`` and until every
probe answers 200 again and a run submitted after the fault has completed
(``RECOVERY_BOUND`` at most), so one phase's tail does not land in the
next. After the last phase the load stops and every accepted run is read
until it has ended (``SETTLE_SECONDS`` at most). An ``lgos`` process that
exits meanwhile is noted and started again (``outage_supervisor``).

``python`` runs the ``lgos`` processes with another checkout's interpreter
(the same bench registry installed there), so a change is measured before
and after with one bench.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psycopg
from lgos_testkit.postgres import DATABASE, FaultyPostgres, faulty_postgres

from lgos_bench import outage_logs, outage_markdown, outage_report
from lgos_bench.fleet import Fleet, Log, fleet, fleet_folder
from lgos_bench.outage_load import (
    FOREGROUND_CLIENTS,
    GIVE_UP_SECONDS,
    PROBE_EVERY,
    PROBE_TIMEOUT,
    SUBMIT_EVERY,
    Load,
    Records,
)
from lgos_bench.outage_report import Phase
from lgos_bench.outage_supervisor import Supervisor
from lgos_bench.suite import (
    core_commit,
    interpreter_tree,
    library_revision,
    run_meta,
)

PHASES = ("reset", "refuse", "stall", "restart")
STEADY_SECONDS = 10.0
FAULT_SECONDS = 15.0
RECOVERY_SECONDS = 20.0
RECOVERY_BOUND = 120.0
"""The longest a recovery waits for readiness and a completed new run."""
SETTLE_SECONDS = 180.0
RESETS = 3
RESET_GAP = 2.0
WORKERS = 2
WARM_SECONDS = 60.0

Fault = Callable[[FaultyPostgres, float], tuple[float, float]]


def reset(database: FaultyPostgres, seconds: float) -> tuple[float, float]:
    """Every client backend terminated ``RESETS`` times, ``RESET_GAP`` apart;
    the fault lasts from the first to the last."""
    began = time.monotonic()
    for index in range(RESETS):
        if index:
            time.sleep(RESET_GAP)
        database.terminate_clients()
    return began, time.monotonic()


def refuse(database: FaultyPostgres, seconds: float) -> tuple[float, float]:
    began = time.monotonic()
    with database.refusing():
        time.sleep(seconds)  # the outage's length: what the phase is about
    return began, time.monotonic()


def stall(database: FaultyPostgres, seconds: float) -> tuple[float, float]:
    began = time.monotonic()
    with database.stalled():
        time.sleep(seconds)
    return began, time.monotonic()


def restart(database: FaultyPostgres, seconds: float) -> tuple[float, float]:
    """Stopped and started; the fault ends once it accepts connections."""
    began = time.monotonic()
    database.restart()
    return began, time.monotonic()


FAULTS: dict[str, Fault] = {
    "reset": reset,
    "refuse": refuse,
    "stall": stall,
    "restart": restart,
}


@dataclass(frozen=True, slots=True)
class Plan:
    phases: tuple[str, ...] = PHASES
    steady_s: float = STEADY_SECONDS
    fault_s: float = FAULT_SECONDS
    recovery_s: float = RECOVERY_SECONDS
    settle_s: float = SETTLE_SECONDS
    workers: int = WORKERS
    submit_every: float = SUBMIT_EVERY
    give_up_s: float = GIVE_UP_SECONDS
    foreground_clients: int = FOREGROUND_CLIENTS
    probe_every: float = PROBE_EVERY
    probe_timeout: float = PROBE_TIMEOUT

    def __post_init__(self) -> None:
        unknown = [name for name in self.phases if name not in FAULTS]
        if unknown or not self.phases:
            raise ValueError(
                f"unknown phases {', '.join(unknown) or '(none given)'}: "
                f"choose from {', '.join(PHASES)}"
            )


async def _warm(load: Load, log: Log) -> None:
    """One background run completed and one foreground answer, before the
    load starts (the first of each pays for imports and connections); what
    they recorded is dropped."""
    log("warming up: one background run and one foreground request")
    deadline = time.monotonic() + WARM_SECONDS
    await load.submit_one()
    (warm,) = load.records.submissions
    if warm.response_id is None:
        raise RuntimeError("the warm-up submission was not accepted")
    while (ending := await load.read(warm.response_id)) is None:
        if time.monotonic() > deadline:
            raise RuntimeError("the warm-up run did not end")
        await asyncio.sleep(0.1)
    if ending.status != "completed":
        raise RuntimeError(f"the warm-up run ended {ending.status}: {ending.error}")
    answer = await load.foreground_one()
    if answer is None or answer.status_code != 200:
        raise RuntimeError(f"the warm-up foreground request failed: {answer}")
    load.records = Records()


async def _recovered(
    load: Load, first: asyncio.Task[float | None], bound: float
) -> bool:
    """Whether every probe answers 200 and the first new run has completed
    (or was given up) within ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if first.done() and load.all_ready():
            return first.result() is not None
        await asyncio.sleep(PROBE_EVERY)
    return False


_LISTENING = (
    "SELECT query, count(*) FROM pg_stat_activity WHERE datname = %s "
    "AND query ILIKE 'listen%%' GROUP BY query"
)


def listening(database: FaultyPostgres) -> dict[str, int]:
    """The sessions whose last statement was a LISTEN, by statement: the
    workers' job listeners and the API's followers. One that the fault took
    and that was not opened again is a process waking on its poll interval
    instead of a notification."""
    with psycopg.connect(database.admin_url, autocommit=True) as conn:
        rows = conn.execute(_LISTENING, (DATABASE,)).fetchall()
    return {str(query): int(count) for query, count in rows}


async def _phase(
    name: str, load: Load, database: FaultyPostgres, plan: Plan, log: Log
) -> Phase:
    began = time.monotonic()
    log(f"{name}: {plan.steady_s:g} s steady")
    await asyncio.sleep(plan.steady_s)
    before = await asyncio.to_thread(listening, database)
    log(f"{name}: the fault")
    fault_began, fault_ended = await asyncio.to_thread(
        FAULTS[name], database, plan.fault_s
    )
    log(f"{name}: the fault ended after {fault_ended - fault_began:.1f} s; recovery")
    first = asyncio.create_task(load.first_completed_after(fault_ended, RECOVERY_BOUND))
    await asyncio.sleep(plan.recovery_s)
    left = max(0.0, RECOVERY_BOUND - (time.monotonic() - fault_ended))
    recovered = await _recovered(load, first, left)
    if not first.done():
        first.cancel()
    completed = first.result() if first.done() and not first.cancelled() else None
    if not recovered:
        log(f"{name}: not recovered within {RECOVERY_BOUND:g} s; going on")
    after = await asyncio.to_thread(listening, database)
    return Phase(
        name,
        began,
        fault_began,
        fault_ended,
        time.monotonic(),
        completed,
        recovered,
        before,
        after,
    )


async def drive(
    running: Fleet, database: FaultyPostgres, plan: Plan, log: Log
) -> dict[str, Any]:
    """The load through every phase, then the runs' endings."""
    api = running.started_apis[0]
    health = [("api", api.health)]
    health += [(f"worker {n}", url) for n, url in enumerate(running.worker_health)]
    load = Load(api.base, health)
    supervisor = Supervisor(running, log)
    watching = asyncio.create_task(supervisor.run())
    try:
        await _warm(load, log)
        origin, wall = time.monotonic(), time.time()
        load.start()
        phases = [await _phase(name, load, database, plan, log) for name in plan.phases]
        log("stopping the load (submissions under way are waited for)")
        await load.stop()
        log("waiting for every accepted run to end")
        endings = await load.endings(plan.settle_s, log)
    finally:
        supervisor.stop()
        await watching
        await load.close()
    by_id = {ending.response_id: ending for ending in endings}
    exits = [*supervisor.exits, *supervisor.still_down()]
    return {
        "origin": origin,
        "wall": wall,
        "phases": phases,
        "figures": [
            outage_report.summarize(phase, load.records, by_id, origin, exits)
            for phase in phases
        ],
        "exits": outage_report.exits(exits, origin),
        "not_ended": [
            e.response_id for e in endings if e.status in ("not ended", "missing")
        ],
        "readiness": outage_report.timeline(load.records.probes, origin),
    }


def _phase_of(
    phases: list[Phase], origin: float, wall: float
) -> Callable[[float | None], str]:
    """Names the phase of a Unix time (log records are stamped so)."""

    def phase_of(at: float | None) -> str:
        if at is None:
            return "unstamped"
        moment = at - wall + origin
        if not phases or moment < phases[0].began:
            return "warm-up"
        for phase in phases:
            if moment < phase.ended:
                return phase.name
        return "settle"

    return phase_of


def run(
    log: Log,
    plan: Plan = Plan(),
    *,
    python: str | None = None,
    logs: Path | None = None,
) -> dict[str, Any]:
    began = time.monotonic()
    label, package = interpreter_tree(python)
    meta = run_meta(
        "outage",
        lgos_revision=library_revision(package),
        lgos_core_commit=core_commit(package),
        lgos_python=label,
        plan=asdict(plan),
    )
    env = {"LGOS_RESPONSE_STORE": "postgres"}
    with fleet_folder(logs, "outage") as folder, faulty_postgres() as database:
        log(f"PostgreSQL on port {database.port}; the fleet ({label})")
        try:
            with fleet(
                folder,
                log,
                apis=1,
                workers=plan.workers,
                env=env,
                database_url=database.url,
                python=python,
            ) as running:
                driven = asyncio.run(drive(running, database, plan, log))
        finally:
            shutil.copy(database.base / "postgres.log", folder / "postgres.log")
        logged = outage_logs.summarize(
            [*folder.glob("serve-*.log"), *folder.glob("worker-*.log")],
            _phase_of(driven["phases"], driven["origin"], driven["wall"]),
        )
    meta["wall_seconds"] = round(time.monotonic() - began, 1)
    if logs is not None:
        meta["logs"] = str(logs)
    return {
        "meta": meta,
        "phases": driven["figures"],
        "not_ended": driven["not_ended"],
        "exits": driven["exits"],
        "readiness": driven["readiness"],
        "logged": logged,
    }


def render(results: dict[str, Any]) -> str:
    return outage_markdown.render(results)


def write(results: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    return outage_markdown.write(results, directory)
