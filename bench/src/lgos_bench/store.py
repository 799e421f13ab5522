"""What keeping Responses costs: LGOS with the response store off and on.

``lgos-bench store`` starts a throwaway PostgreSQL (``lgos db-setup``) and two
LGOS servers on the server core, the same app and graphs, one with
``LGOS_RESPONSE_STORE=postgres``. Each scenario runs on both in alternating
rounds, and reports the server CPU per request of each and their ratio (on /
off), plus PostgreSQL's CPU per request while the store is on (PostgreSQL
shares the load generator's core, so it does not slow the server down).
The target (issue 39): a request costs at most 5% more server CPU with the
store on, streamed or not.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lgos_bench.figures import Measured, ratio, summarize
from lgos_bench.fleet import postgres_database
from lgos_bench.procstat import cpu_seconds, process_tree
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.scenarios import TARGET_CONCURRENCY, Scenario
from lgos_bench.servers import Placement, ServerProcess
from lgos_bench.suite import measure_round, run_meta, run_preamble
from lgos_bench.workload import PLAIN, Workload

Log = Callable[[str], None]

ROUNDS = 4
SECONDS = 16.0
"""Per scenario and server, split over the rounds."""
TARGET_RATIO = 1.05
"""Non-streamed: server CPU per request, store on / off."""
KINDS = ("off", "on")


def scenarios(seconds: float = SECONDS) -> list[Scenario]:
    c = TARGET_CONCURRENCY
    return [
        Scenario("responses", stream, PLAIN, c, 10**6, seconds)
        for stream in (False, True)
    ]


async def _compare(
    servers: dict[str, ServerProcess],
    postgres_pid: int,
    scenario: Scenario,
    rounds: int,
) -> dict[str, Any]:
    measured = {kind: Measured() for kind in KINDS}
    postgres_cpu = 0.0
    for round_ in range(rounds):
        for kind in KINDS[::-1] if round_ % 2 else KINDS:
            # Backends come and go with connections: find them each round.
            before = cpu_seconds(process_tree(postgres_pid))
            await measure_round(servers[kind], scenario, rounds, measured[kind])
            if kind == "on":
                postgres_cpu += cpu_seconds(process_tree(postgres_pid)) - before
    figures = {
        kind: summarize(measured[kind], stream=scenario.stream) for kind in KINDS
    }
    requests = figures["on"]["requests"] or 1.0
    return {
        "key": scenario.key,
        "stream": scenario.stream,
        "off": figures["off"],
        "on": figures["on"],
        "cpu_ratio": ratio(
            figures["on"]["cpu_ms_per_req"], figures["off"]["cpu_ms_per_req"]
        ),
        "rps_ratio": ratio(figures["on"]["rps"], figures["off"]["rps"]),
        "postgres_cpu_ms_per_req": postgres_cpu * 1000 / requests,
    }


def _progress(row: dict[str, Any]) -> str:
    off, on = row["off"]["cpu_ms_per_req"] or 0.0, row["on"]["cpu_ms_per_req"] or 0.0
    return (
        f"  {row['key']:34} CPU ms/req off {off:.2f} on {on:.2f} "
        f"ratio {row['cpu_ratio'] or 0.0:.2f}"
    )


def measure(
    placement: Placement, workload: Workload, seconds: float, rounds: int, log: Log
) -> list[dict[str, Any]]:
    with (
        tempfile.TemporaryDirectory(prefix="lgos-bench-store-") as folder,
        postgres_database(Path(folder), log) as database,
    ):
        store_env = {
            "LGOS_RESPONSE_STORE": "postgres",
            "LGOS_DATABASE_URL": database.url,
        }
        servers = {
            "off": ServerProcess("lgos", 1, workload, placement),
            "on": ServerProcess("lgos", 1, workload, placement, env=store_env),
        }
        try:
            for server in servers.values():
                server.start()
            rows = []
            for scenario in scenarios(seconds):
                assert database.pid is not None  # postgres_database started it
                row = asyncio.run(_compare(servers, database.pid, scenario, rounds))
                log(_progress(row))
                rows.append(row)
            return rows
        finally:
            for server in servers.values():
                server.stop()


def run(
    placement: Placement,
    workload: Workload,
    log: Log,
    *,
    seconds: float = SECONDS,
    rounds: int = ROUNDS,
) -> dict[str, Any]:
    meta = run_meta(
        "store",
        placement=placement.describe(),
        tokens=workload.tokens,
        rounds=rounds,
        seconds=seconds,
    )
    rows = measure(placement, workload, seconds, rounds, log)
    return {"meta": meta, "store": rows}


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        "# lgos-bench: keeping Responses on PostgreSQL (store off vs on)",
        "",
        run_preamble(meta)
        + f" {meta['placement']}; PostgreSQL on the load generator's core. "
        f"{meta['tokens']} tokens per answer, {meta['rounds']} alternating rounds "
        f"of {meta['seconds']} s per scenario and server.",
        "",
        "| scenario | req/s off | req/s on | server CPU ms/req off | server CPU "
        "ms/req on | on/off | PostgreSQL CPU ms/req | errors off/on |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["store"]:
        off, on = row["off"], row["on"]
        cells = [
            row["key"],
            fmt(off["rps"], 1),
            fmt(on["rps"], 1),
            fmt(off["cpu_ms_per_req"], 2),
            fmt(on["cpu_ms_per_req"], 2),
            f"{fmt(row['cpu_ratio'], 2)}×",
            fmt(row["postgres_cpu_ms_per_req"], 2),
            f"{int(off['errors'] or 0)}/{int(on['errors'] or 0)}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| target | limit | value | met |", "|---|---|---|---|"]
    for row in results["store"]:
        value = row["cpu_ratio"]
        met = "yes" if value is not None and value <= TARGET_RATIO else "NO"
        lines.append(
            f"| {row['key']}: server CPU/request, store on / off | "
            f"<= {TARGET_RATIO}x | {fmt(value, 2)} | {met} |"
        )
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-store.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
