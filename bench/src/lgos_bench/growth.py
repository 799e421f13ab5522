"""``lgos-bench growth``: does an operation's cost stay flat as data grows?

Issue 48's question, on PostgreSQL. One throwaway PostgreSQL holds two
databases set up by ``lgos db-setup``: ``empty``, with only the subject's
own rows, and ``grown``, with a long-lived deployment's (``growth_data``:
by default a million kept Responses over eight tenants, 10,000
Conversations of 200 items, 10,000 batches, 100,000 waiting jobs), both
made by SQL in minutes. Each operation (``growth_ops``) is timed on both,
alternated try by try (empty then grown, then grown then empty ...) so both
see the same machine, in this process on the library's stores, and the
report gives each side's median wall time and their ratio against the 1.2x
target, with a 95% bootstrap interval of the ratio. Then the retention
sweep deletes the grown database's million expired Responses while submits
go on beside it (``growth_sweep``).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from lgos_bench.figures import percentile
from lgos_bench.fleet import Log, fleet_folder, postgres_database, set_up
from lgos_bench.growth_data import Shape, Sizes, build, table_sizes
from lgos_bench.growth_ops import Operation, close_subject, open_subject, operations
from lgos_bench.growth_sweep import sweep
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.suite import library_revision

TARGET = 1.2
"""Issue 48: each operation within 1.2x of its cost on an empty database."""
TRIES = 300
WARMUP = 10
BOOTSTRAP = 1000


@dataclass(frozen=True, slots=True)
class Plan:
    sizes: Sizes = field(default_factory=Sizes)
    tries: int = TRIES
    sweep: bool = True
    """Run the retention sweep phase (it empties the grown database)."""
    alone_s: float = 10.0
    """Seconds of submits before the sweep starts (the reference)."""


def _database(url: str, name: str) -> str:
    """``url`` naming the database ``name`` instead."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _create(url: str, name: str, log: Log) -> str:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    made = _database(url, name)
    set_up(made)
    log(f"database {name}: lgos db-setup done")
    return made


def _shape(side: str, sizes: Sizes) -> Shape:
    return Shape.grown(sizes) if side == "grown" else Shape.empty(sizes)


def _ratio_interval(empty: list[float], grown: list[float]) -> tuple[float, float]:
    """A 95% bootstrap interval of median(grown) / median(empty)."""
    pick = random.Random(48)
    ratios = sorted(
        statistics.median(pick.choices(grown, k=len(grown)))
        / statistics.median(pick.choices(empty, k=len(empty)))
        for _ in range(BOOTSTRAP)
    )
    return ratios[int(0.025 * BOOTSTRAP)], ratios[int(0.975 * BOOTSTRAP) - 1]


def _figures(operation: Operation, times: dict[str, list[float]]) -> dict[str, Any]:
    empty = [value * 1000 for value in times["empty"]]
    grown = [value * 1000 for value in times["grown"]]
    ratio = statistics.median(grown) / statistics.median(empty)
    low, high = _ratio_interval(empty, grown)
    return {
        "operation": operation.name,
        "what": operation.what,
        "tries": len(empty),
        "empty_median_ms": statistics.median(empty),
        "empty_p90_ms": percentile(empty, 90),
        "grown_median_ms": statistics.median(grown),
        "grown_p90_ms": percentile(grown, 90),
        "ratio": ratio,
        "ratio_low": low,
        "ratio_high": high,
        "met": ratio <= TARGET,
    }


async def _alternated(
    sides: dict[str, Operation], tries: int
) -> dict[str, list[float]]:
    """Seconds of each try of one operation on each side, the sides
    alternated try by try (empty then grown, grown then empty ...) after a
    warm-up. One operation at a time: what another leaves in the caches
    (the queue statistics read the whole queue table) is not this one's."""
    times: dict[str, list[float]] = {side: [] for side in sides}
    warmup = min(WARMUP, tries)
    for attempt in range(warmup + tries):
        order = ("empty", "grown") if attempt % 2 == 0 else ("grown", "empty")
        for side in order:
            steps = await sides[side].steps()
            began = time.perf_counter()
            await steps.timed()
            took = time.perf_counter() - began
            if steps.undo is not None:
                await steps.undo()
            if attempt >= warmup:
                times[side].append(took)
    return times


async def _measure(
    urls: dict[str, str], plan: Plan, log: Log
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    sides = {
        name: await open_subject(url, _shape(name, plan.sizes))
        for name, url in urls.items()
    }
    try:
        listed = {name: operations(subject) for name, subject in sides.items()}
        log(f"timing each operation, {plan.tries} tries on each database, alternated")
        figures = []
        for index, operation in enumerate(listed["empty"]):
            times = await _alternated(
                {side: listed[side][index] for side in sides}, plan.tries
            )
            figures.append(_figures(operation, times))
            log(f"  {operation.name}: {figures[-1]['ratio']:.2f}x")
        swept = (
            await sweep(
                urls["grown"], sides["grown"], plan.sizes, log, alone_s=plan.alone_s
            )
            if plan.sweep
            else None
        )
    finally:
        for subject in sides.values():
            await close_subject(subject)
    return figures, swept


def run(log: Log, plan: Plan, *, logs: Path | None = None) -> dict[str, Any]:
    """Both databases built, every operation timed on both, then the
    sweep; the results."""
    began = time.monotonic()
    with fleet_folder(logs, "growth") as folder, postgres_database(folder, log) as db:
        # The throwaway server's own database (set up) is the empty one.
        urls = {"empty": db.url, "grown": _create(db.url, "lgos_grown", log)}
        log("building the empty database")
        build(urls["empty"], _shape("empty", plan.sizes), log)
        log("building the grown database")
        built = build(urls["grown"], _shape("grown", plan.sizes), log)
        tables = {name: table_sizes(url) for name, url in urls.items()}
        figures, swept = asyncio.run(_measure(urls, plan, log))
    return {
        "meta": {
            "mode": "growth",
            "library": library_revision(),
            "sizes": asdict(plan.sizes),
            "tries": plan.tries,
            "target": TARGET,
            "build_seconds": built,
            "wall_seconds": time.monotonic() - began,
            "where": "in process: the library's PostgreSQL stores and queue "
            "(PostgresBackend) on a PostgreSQL server of its own; the sweep is "
            "the lgos responses-cleanup command",
        },
        "tables": tables,
        "operations": figures,
        "sweep": swept,
    }


def _size(value: int) -> str:
    return f"{value / 2**20:,.0f} MiB"


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    sizes = meta["sizes"]
    lines = [
        "# lgos-bench growth",
        "",
        f"Library {meta['library']}; {meta['where']}. Grown: "
        f"{sizes['responses']:,} kept Responses over {sizes['tenants']} tenants "
        f"(chains of {sizes['chain']}), {sizes['conversations']:,} Conversations "
        f"of {sizes['items']} items, {sizes['batches']:,} batches, "
        f"{sizes['jobs']:,} waiting jobs; built in "
        f"{sum(meta['build_seconds'].values()):.0f} s. Each operation: median "
        f"wall time of {meta['tries']} tries on each database, alternated; "
        f"target: grown/empty at most {meta['target']}x.",
        "",
        "| operation | empty ms (median / p90) | grown ms (median / p90) "
        "| grown/empty (95% CI) | within 1.2x |",
        "|---|---|---|---|---|",
    ]
    for row in results["operations"]:
        lines.append(
            f"| {row['operation']} | {fmt(row['empty_median_ms'], 3)} / "
            f"{fmt(row['empty_p90_ms'], 3)} | {fmt(row['grown_median_ms'], 3)} / "
            f"{fmt(row['grown_p90_ms'], 3)} | {fmt(row['ratio'])}x "
            f"({fmt(row['ratio_low'])}–{fmt(row['ratio_high'])}) | "
            f"{fmt(row['met'])} |"
        )
    lines += [
        "",
        "| table | empty rows | grown rows | grown size |",
        "|---|---|---|---|",
    ]
    grown, empty = results["tables"]["grown"], results["tables"]["empty"]
    for name in sorted(grown):
        lines.append(
            f"| {name} | {empty.get(name, {}).get('rows', 0):,} | "
            f"{grown[name]['rows']:,} | {_size(grown[name]['bytes'])} |"
        )
    swept = results.get("sweep")
    if swept:
        lines += [
            "",
            "## The retention sweep beside submits",
            "",
            f"`lgos responses-cleanup` deleted {fmt(swept['deleted'])} Responses in "
            f"{swept['seconds']:.1f} s; its longest transaction: "
            f"{swept['longest_transaction_s']:.2f} s.",
            "",
            "| submits | when | count | median ms | p99 ms | max ms | 1 s or more |",
            "|---|---|---|---|---|---|---|",
        ]
        for kind, label in (("fresh", "new key"), ("reused", "an expired key")):
            for when in ("before", "during"):
                row = swept[when][kind]
                lines.append(
                    f"| {label} | {when} | {row['count']} | "
                    f"{fmt(row['median_ms'])} | {fmt(row['p99_ms'])} | "
                    f"{fmt(row['max_ms'])} | {row['held_up']} |"
                )
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-growth.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
