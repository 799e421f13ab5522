"""One benchmark run: every phase, in order, into one JSON-ready dict.

1. Start the baseline and LGOS (one worker each) on the server core and check
   that they send equivalent answers.
2. Main matrix (plain graph) and the variants (statuses, citations, tool
   call), each scenario on both servers back to back, alternating which goes
   first.
3. LGOS with two uvicorn workers on the worker scenarios.
4. Memory per idle open stream, on freshly started servers.
5. The in-process ceiling, then the targets.
"""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import fastapi
import langgraph.version
import langgraph_openai_serve
import uvicorn

from lgos_bench import equivalence
from lgos_bench.figures import Figures, Measured, ratios, summarize
from lgos_bench.idle import idle_phase
from lgos_bench.inprocess import run_ceiling
from lgos_bench.load import client_for, run_load, warm
from lgos_bench.procstat import CLOCK_TICKS, machine_busy_seconds
from lgos_bench.scenarios import TARGET_CONCURRENCY, Plan, Scenario
from lgos_bench.servers import UVICORN_FLAGS, Placement, ServerProcess
from lgos_bench.targets import (
    evaluate_idle,
    evaluate_inprocess,
    evaluate_targets,
    extra_costs,
)
from lgos_bench.workload import Workload

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class RunConfig:
    plan: Plan
    workload: Workload
    placement: Placement
    mode: str


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


async def measure_round(
    server: ServerProcess, scenario: Scenario, rounds: int, into: Measured
) -> None:
    """One round: warm the connections, load 1/rounds of ``scenario``, and add
    the server's CPU and RSS (and the load generator's CPU) to ``into``."""
    request = scenario.target
    async with client_for(scenario.concurrency) as client:
        await warm(client, server.base_url, request, scenario.concurrency)
        before, own, machine = server.usage(), _own_cpu(), machine_busy_seconds()
        result = await run_load(
            client,
            server.base_url,
            request,
            concurrency=scenario.concurrency,
            max_requests=-(-scenario.max_requests // rounds),
            max_seconds=scenario.max_seconds / rounds,
        )
        after, own = server.usage(), _own_cpu() - own
        machine = machine_busy_seconds() - machine
    rss = (before.rss_bytes, after.rss_bytes)
    into.add(result, after.cpu_seconds - before.cpu_seconds, own, machine, rss)


async def measure(
    server: ServerProcess, scenario: Scenario, rounds: int = 1
) -> Figures:
    measured = Measured()
    for _ in range(rounds):
        await measure_round(server, scenario, rounds, measured)
    return summarize(measured, stream=scenario.stream)


def _progress(key: str, measured: dict[str, Figures], ratio: Figures) -> str:
    cpu = {kind: measured[kind]["cpu_ms_per_req"] or 0.0 for kind in measured}
    return (
        f"  {key:34} CPU ms/req baseline {cpu['baseline']:.2f} "
        f"LGOS {cpu['lgos']:.2f} ratio {ratio['cpu_ms_per_req'] or 0.0:.2f}"
    )


def _row(scenario: Scenario) -> dict[str, Any]:
    return {
        "key": scenario.key,
        "api": scenario.api,
        "stream": scenario.stream,
        "model": scenario.model,
        "concurrency": scenario.concurrency,
    }


async def compare(
    servers: dict[str, ServerProcess],
    scenarios: list[Scenario],
    rounds: int,
    log: Log,
) -> list[dict[str, Any]]:
    """Each scenario on the baseline and on LGOS, in alternating rounds so
    that both see the same machine conditions."""
    rows = []
    kinds = ("baseline", "lgos")
    for index, scenario in enumerate(scenarios):
        measured = {kind: Measured() for kind in kinds}
        for round_ in range(rounds):
            flip = (index + round_) % 2
            for kind in kinds[::-1] if flip else kinds:
                await measure_round(servers[kind], scenario, rounds, measured[kind])
        figures = {
            kind: summarize(measured[kind], stream=scenario.stream) for kind in kinds
        }
        row = _row(scenario)
        row.update(
            baseline=figures["baseline"],
            lgos=figures["lgos"],
            ratio=ratios(figures["lgos"], figures["baseline"]),
        )
        log(_progress(scenario.key, figures, row["ratio"]))
        for kind in kinds:
            errors = measured[kind].result.errors
            if errors:
                log(f"    {kind}: {len(errors)} errors, first: {errors[0]}")
        rows.append(row)
    return rows


def _start(kind: str, workers: int, config: RunConfig) -> ServerProcess:
    return ServerProcess(kind, workers, config.workload, config.placement).start()


def library_revision(folder: Path | None = None) -> str:
    """The core library's git commit, marked ``+dirty`` with local changes:
    this interpreter's, or the one whose package folder is ``folder``."""
    folder = folder or Path(langgraph_openai_serve.__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changes = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if changes else "")


def interpreter_tree(python: str | None) -> tuple[str, Path | None]:
    """The interpreter the ``lgos`` processes run and its core package's
    folder (for the revision)."""
    if python is None:
        package = Path(langgraph_openai_serve.__file__).resolve().parent
        return "this interpreter", package
    found = subprocess.run(
        [
            python,
            "-c",
            "import langgraph_openai_serve as m; print(m.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    return python, Path(found).parent


def core_commit(folder: Path | None) -> str:
    """The last commit that changed the core library's folder: what the
    fleet ran, whatever bench commits came after it on the tree."""
    if folder is None:
        return "unknown"
    try:
        return subprocess.run(
            ["git", "-C", str(folder), "log", "-1", "--format=%h", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def background_cores(seconds: float = 1.0) -> float:
    """How many cores other processes keep busy while the bench is idle."""
    before = machine_busy_seconds()
    time.sleep(seconds)
    return (machine_busy_seconds() - before) / seconds


def run_meta(mode: str, **extra: Any) -> dict[str, Any]:
    """What every report's ``meta`` starts with: the mode, the library's
    revision, how busy the machine was before and when the run started;
    ``extra`` adds the mode's own (or overrides, e.g. another revision)."""
    return {
        "mode": mode,
        "lgos_revision": library_revision(),
        "background_cores_before": round(background_cores(), 2),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        **extra,
    }


def run_preamble(meta: dict[str, Any]) -> str:
    """A report's first sentence: which LGOS ran, when, and how busy the
    machine was before (from ``run_meta``)."""
    return (
        f"LGOS {meta['lgos_revision']}, started {meta['started']}; other "
        f"processes kept {meta['background_cores_before']} cores busy before the "
        "run."
    )


def _meta(config: RunConfig) -> dict[str, Any]:
    return {
        **run_meta(config.mode),
        "tokens": config.workload.tokens,
        "placement": config.placement.describe(),
        "server_cores": sorted(config.placement.server_cores),
        "load_cores": sorted(config.placement.load_cores),
        "uvicorn": f"{uvicorn.__version__} {' '.join(UVICORN_FLAGS)}",
        "python": platform.python_version(),
        "fastapi": fastapi.__version__,
        "langgraph": langgraph.version.__version__,
        "clock_ticks_per_s": CLOCK_TICKS,
        "plan": asdict(config.plan),
    }


def _workers_phase(
    config: RunConfig, main: list[dict[str, Any]], log: Log
) -> list[dict[str, Any]]:
    by_key = {row["key"]: row for row in main}
    server = _start("lgos", 2, config)
    rows = []
    try:
        for scenario in config.plan.workers():
            two = asyncio.run(measure(server, scenario, config.plan.rounds))
            row = _row(scenario)
            one = by_key.get(scenario.key, {})
            row.update(
                lgos_x2=two,
                vs_lgos_x1=ratios(two, one.get("lgos", {})),
                vs_baseline=ratios(two, one.get("baseline", {})),
            )
            log(f"  {scenario.key:34} LGOS x2 CPU ms/req {two['cpu_ms_per_req']:.2f}")
            rows.append(row)
    finally:
        server.stop()
    return rows


class _Phases:
    """Logs each phase as it starts and records how long it took."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.seconds: dict[str, float] = {}
        self._name: str | None = None
        self._began = 0.0

    def next(self, name: str, detail: str = "") -> None:
        self.done()
        self.log(f"{name}{detail}")
        self._name, self._began = name, time.monotonic()

    def done(self) -> None:
        if self._name is not None:
            self.seconds[self._name] = round(time.monotonic() - self._began, 1)
            self._name = None


def run_suite(config: RunConfig, log: Log) -> dict[str, Any]:
    """Every phase of one run; servers are always stopped before returning."""
    results: dict[str, Any] = {"meta": _meta(config)}
    phases = _Phases(log)
    log(f"placement: {config.placement.describe()}")
    phases.next("start servers")
    servers = {kind: _start(kind, 1, config) for kind in ("baseline", "lgos")}
    try:
        phases.next("equivalence check")
        results["equivalence"] = equivalence.compare(
            servers["baseline"].base_url, servers["lgos"].base_url
        )
        phases.next("main matrix", " (plain graph)")
        results["scenarios"] = asyncio.run(
            compare(servers, config.plan.main(), config.plan.rounds, log)
        )
        phases.next("variants", f" at concurrency {TARGET_CONCURRENCY}")
        results["variants"] = asyncio.run(
            compare(servers, config.plan.variants(), config.plan.rounds, log)
        )
    finally:
        for server in servers.values():
            server.stop()
    phases.next("workers", ": LGOS with 2 uvicorn workers")
    results["workers"] = _workers_phase(config, results["scenarios"], log)
    phases.next("idle streams", f": {config.plan.idle_streams} per fresh server")
    results["idle"] = idle_phase(
        config.workload,
        config.placement,
        config.plan.idle_apis,
        config.plan.idle_streams,
        log,
    )
    phases.next("in-process ceiling")
    results["inprocess"] = run_ceiling(config.workload, config.plan.inprocess_runs)
    phases.done()
    results["meta"]["phase_seconds"] = phases.seconds
    results["extra_costs"] = extra_costs(
        results["inprocess"]["apps"], results["variants"]
    )
    results["targets"] = (
        evaluate_targets(results["scenarios"])
        + evaluate_inprocess(results["inprocess"]["apps"])
        + evaluate_idle(results["idle"])
    )
    return results
