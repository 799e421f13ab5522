"""From ``lgos-bench scale``'s measured rounds to its figures and report.

Pure: ``scale.py`` measures, this module pools its rounds (``steady``,
``throughput``, the summaries) and writes ``<timestamp>-scale.md`` and
``.json``; the report tests run it on given figures.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lgos_bench.figures import percentile
from lgos_bench.report import RESULTS_DIR, fmt, write_pair

TARGET = 0.9
"""Runs per second with N workers, as a share of N x one worker's."""


@dataclass(frozen=True, slots=True)
class Run:
    """One measured background run: the worker that ran it, when it was
    submitted and accepted (client clock) and its node's start and end."""

    worker: int
    submitted: float
    accepted: float
    started: float
    ended: float


@dataclass(frozen=True, slots=True)
class Steady:
    """The steady window of one round of runs (see the module's text)."""

    runs: int
    window_s: float
    busy_s: float
    """Slot-seconds spent inside a node in the window."""
    node_s: float
    """The node's mean time over every run."""


def steady(runs: list[Run], slots: int) -> Steady | None:
    """The window from the ``slots``-th start (every slot busy) to the last
    start (the queue's last run taken); ``None`` if there is none."""
    starts = sorted(run.started for run in runs)
    if len(starts) <= slots or starts[-1] <= starts[slots - 1]:
        return None
    begin, end = starts[slots - 1], starts[-1]
    busy = sum(max(0.0, min(r.ended, end) - max(r.started, begin)) for r in runs)
    node = statistics.fmean(run.ended - run.started for run in runs)
    return Steady(len(runs), end - begin, busy, node)


def throughput(rounds: list[Steady], slots: int) -> dict[str, float]:
    """Rounds of one worker count pooled: the slots' occupancy, runs per
    second and the time a slot spends per run outside the node."""
    occupancy = sum(r.busy_s for r in rounds) / (
        slots * sum(r.window_s for r in rounds)
    )
    node = sum(r.node_s * r.runs for r in rounds) / sum(r.runs for r in rounds)
    return {
        "occupancy": occupancy,
        "node_ms": node * 1000,
        "runs_per_s": slots * occupancy / node,
        "overhead_ms": node * (1 / occupancy - 1) * 1000,
    }


def background_summary(
    rounds: list[dict[str, Any]], wait: float, concurrency: int
) -> list[dict[str, Any]]:
    """One row per worker count, its rounds pooled."""
    rows = []
    for workers in sorted({r["workers"] for r in rounds}):
        mine = [r for r in rounds if r["workers"] == workers]
        slots = workers * concurrency
        windows = [
            Steady(r["runs"], r["window_s"], r["busy_s"], r["node_s"]) for r in mine
        ]
        pooled = throughput(windows, slots)
        each = [throughput([w], slots)["runs_per_s"] for w in windows]
        rows.append(
            {
                "workers": workers,
                "concurrency": concurrency,
                "rounds": len(mine),
                "runs": sum(r["runs"] for r in mine),
                **pooled,
                "runs_per_s_min": min(each),
                "runs_per_s_max": max(each),
                "ideal_per_s": slots / wait,
                "of_ideal": pooled["runs_per_s"] * wait / slots,
                "worker_cpu_ms_per_run": statistics.fmean(
                    r["worker_cpu_ms_per_run"] for r in mine
                ),
                "postgres_cpu_ms_per_run": statistics.fmean(
                    r["postgres_cpu_ms_per_run"] for r in mine
                ),
                "other_cores": statistics.fmean(r["other_cores"] for r in mine),
            }
        )
    one = rows[0]["runs_per_s"]
    for row in rows:
        row["of_one_worker_x_n"] = row["runs_per_s"] / (row["workers"] * one)
    return rows


def foreground_summary(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per API process count, its rounds pooled."""
    rows = []
    for apis in sorted({r["apis"] for r in rounds}):
        mine = [r for r in rounds if r["apis"] == apis]
        requests = sum(r["requests"] for r in mine) or 1
        latencies = [ms for r in mine for ms in r["latencies_ms"]]
        rows.append(
            {
                "apis": apis,
                "rounds": len(mine),
                "requests": sum(r["requests"] for r in mine),
                "errors": sum(r["errors"] for r in mine),
                "rps": requests / sum(r["elapsed_s"] for r in mine),
                "p50_ms": percentile(latencies, 50),
                "p99_ms": percentile(latencies, 99),
                "server_cpu_ms_per_req": sum(r["server_cpu_s"] for r in mine)
                * 1000
                / requests,
                "client_cpu_ms_per_req": sum(r["client_cpu_s"] for r in mine)
                * 1000
                / requests,
                "other_cores": statistics.fmean(r["other_cores"] for r in mine),
            }
        )
    return rows


def render(results: dict[str, Any]) -> str:
    meta, plan, queue = results["meta"], results["meta"]["plan"], results["queue"]
    lines = [
        "# lgos-bench scale: how a fleet grows",
        "",
        f"LGOS {meta['lgos_revision']}, started {meta['started']}. {meta['cores']} "
        f"cores shared by every process, nothing pinned: PostgreSQL, "
        f"{max(plan['api_order'])} `lgos serve`, "
        f"{plan['workers']} `lgos worker` ({plan['concurrency']} runs at once "
        f"each) and the bench. Other processes kept "
        f"{fmt(meta['background_cores_before'])} cores busy before the run and "
        f"{fmt(meta['background_cores_after'])} after (load average "
        f"{fmt(meta['load_average_before'], 1)} → "
        f"{fmt(meta['load_average_after'], 1)}); *other cores* below is the same "
        "during each measurement.",
        "",
        f"## Background runs: a {plan['wait']:g} s wait, {plan['concurrency']} "
        "at once per worker",
        "",
        f"Rounds in the order {', '.join(map(str, plan['worker_order']))} "
        f"workers, {plan['waves']} runs per slot each, pooled. *Overhead* is what "
        "a slot spends per run outside the graph's node: taking the job, storing "
        "the Response, its events and checkpoint.",
        "",
        "| workers | runs | runs/s (rounds min–max) | of 1 worker × N | linear "
        "ideal | of ideal | overhead ms/run | worker CPU ms/run | PostgreSQL CPU "
        "ms/run | other cores |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["background"]:
        lines.append(
            f"| {row['workers']} | {row['runs']} | {fmt(row['runs_per_s'])} "
            f"({fmt(row['runs_per_s_min'])}–{fmt(row['runs_per_s_max'])}) | "
            f"{fmt(row['of_one_worker_x_n'])} | {fmt(row['ideal_per_s'])} | "
            f"{fmt(row['of_ideal'])} | {fmt(row['overhead_ms'], 0)} | "
            f"{fmt(row['worker_cpu_ms_per_run'], 1)} | "
            f"{fmt(row['postgres_cpu_ms_per_run'], 1)} | {fmt(row['other_cores'])} |"
        )
    most = max(row["workers"] for row in results["background"])
    lines += [
        "",
        f"Target: at least {TARGET} of linear (1 worker × N) up to {most} "
        f"workers: {'met' if linear(results['background']) else 'MISSED'}.",
        "",
        f"## Queue wait: {queue['workers']} workers, "
        f"{fmt(queue['arrival_per_s'])} runs/s arriving, {queue['runs']} runs",
        "",
        "| | p50 ms | p99 ms | mean ms | min ms | max ms |",
        "|---|---|---|---|---|---|",
        _spread("submit → node started", queue["wait_ms"]),
        _spread("submit → accepted", queue["accepted_ms"]),
        "",
        f"Other processes kept {fmt(queue['other_cores'])} cores busy meanwhile.",
        "",
        f"## Foreground: streamed Responses, 64 tokens, concurrency "
        f"{plan['foreground_concurrency']}",
        "",
        f"Rounds in the order {', '.join(map(str, plan['api_order']))} API "
        f"processes, {plan['foreground_seconds']:g} s each, pooled. CPU-bound "
        "requests: on a busy machine, more processes mostly win a bigger share "
        "of its cores.",
        "",
        "| API processes | requests | req/s | p50 ms | p99 ms | server CPU ms/req "
        "| client CPU ms/req | errors | other cores |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["foreground"]:
        lines.append(
            f"| {row['apis']} | {row['requests']} | {fmt(row['rps'], 1)} | "
            f"{fmt(row['p50_ms'], 1)} | {fmt(row['p99_ms'], 1)} | "
            f"{fmt(row['server_cpu_ms_per_req'])} | "
            f"{fmt(row['client_cpu_ms_per_req'])} | {row['errors']} | "
            f"{fmt(row['other_cores'])} |"
        )
    return "\n".join(lines)


def linear(background: list[dict[str, Any]]) -> bool:
    return all(row["of_one_worker_x_n"] >= TARGET for row in background)


def _spread(label: str, ms: dict[str, float | None]) -> str:
    keys = ("p50", "p99", "mean", "min", "max")
    return f"| {label} | " + " | ".join(fmt(ms[key], 1) for key in keys) + " |"


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-scale.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
