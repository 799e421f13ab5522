"""How soon a follower on another API process sees a background run's first event.

``lgos-bench background`` starts a throwaway fleet (``fleet.py``): PostgreSQL,
two ``lgos serve`` processes and one ``lgos worker`` on the PostgreSQL
backend (LISTEN/NOTIFY wakes the worker and the followers). Submissions
arrive at a fixed rate (``--rate``, default 10 per second), whether or not
earlier runs have ended: each is a ``POST /v1/responses`` with
``background=true`` on one API process, then ``GET
/v1/responses/{id}?stream=true`` on the other, read to its end. *Submit to
first event* runs from sending the POST to the first event on the other
process's stream: the submit's transaction, the queue handing the job to the
worker, the worker's first stored event, and the follower noticing it.

``background_marks.py`` stamps each stage in the database, so the report
also says where that time goes. The first ``warmup`` submissions go one at
a time and are not counted.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from lgos_bench import background_marks
from lgos_bench.figures import percentile
from lgos_bench.fleet import BENCH_TOKENS, fleet
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.suite import run_meta, run_preamble
from lgos_bench.workload import PLAIN

DEFAULT_REQUESTS = 200
DEFAULT_RATE = 10.0
DEFAULT_APIS = 2
DEFAULT_WORKERS = 1
WARMUP_REQUESTS = 10
_BODY = json.dumps({"model": PLAIN, "input": "Say something.", "background": True})
_HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}
TARGET_P50_MS = 20.0
TARGET_P99_MS = 60.0

Log = Callable[[str], None]

SPANS = (
    ("submit → stored", "submitted", "stored"),
    ("stored → picked by a worker", "stored", "picked"),
    ("picked → attempt counted", "picked", "attempt"),
    ("attempt → in_progress stored", "attempt", "running"),
    ("in_progress → first event stored", "running", "first_event"),
    ("first event stored → on the follower", "first_event", "first_seen"),
)
"""Consecutive stages of one submission (``background_marks.STAGES`` plus
the client's own stamps)."""


@dataclass(frozen=True, slots=True)
class Timing:
    """One submission's client-side stamps (Unix seconds)."""

    response_id: str
    submitted: float
    accepted: float
    first_seen: float
    last_seen: float
    late: float
    """How far behind its due time the submission was sent."""


async def submit_and_follow(
    client: httpx.AsyncClient, submit_to: str, follow_on: str, late: float = 0.0
) -> Timing:
    """Submit one background Response on ``submit_to`` and follow its stream
    on ``follow_on`` to the end; ``ValueError`` unless it completed."""
    submitted = time.time()
    response = await client.post(
        f"{submit_to}/responses", content=_BODY, headers=_HEADERS
    )
    response.raise_for_status()
    response_id = response.json()["id"]
    accepted = time.time()
    first: float | None = None
    last_event = ""
    url = f"{follow_on}/responses/{response_id}"
    params = {"stream": "true"}
    async with client.stream("GET", url, params=params, headers=_HEADERS) as stream:
        stream.raise_for_status()
        async for line in stream.aiter_lines():
            if line.startswith("event:"):
                if first is None:
                    first = time.time()
                last_event = line.removeprefix("event:").strip()
    if first is None or last_event != "response.completed":
        raise ValueError(f"the stream ended with {last_event or 'no event'!r}")
    return Timing(response_id, submitted, accepted, first, time.time(), late)


async def drive(
    apis: tuple[str, ...], requests: int, rate: float, warmup: int, log: Log
) -> tuple[list[Timing], list[str]]:
    """``warmup`` submissions one at a time, then ``requests`` at ``rate`` per
    second; submissions alternate between the API processes and each is
    followed on the next one."""
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
    async with httpx.AsyncClient(timeout=120.0, limits=limits) as client:
        log(f"warming up ({warmup} submissions; the first waits for the worker)")
        for index in range(warmup):
            await submit_and_follow(
                client, apis[index % len(apis)], apis[(index + 1) % len(apis)]
            )
        log(f"measuring {requests} submissions at {rate:g} per second")
        began = time.monotonic()
        tasks = []
        for index in range(requests):
            due = began + index / rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            late = time.monotonic() - due
            submit_to = apis[index % len(apis)]
            follow_on = apis[(index + 1) % len(apis)]
            tasks.append(
                asyncio.create_task(
                    submit_and_follow(client, submit_to, follow_on, late)
                )
            )
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    timings = [item for item in outcomes if isinstance(item, Timing)]
    errors = [repr(item) for item in outcomes if isinstance(item, BaseException)]
    return timings, errors


def summarize_ms(seconds: list[float]) -> dict[str, float | None]:
    """p50, p99, mean, min and max in milliseconds (``None`` when empty)."""
    values = [value * 1000 for value in seconds]
    return {
        "p50": percentile(values, 50),
        "p99": percentile(values, 99),
        "mean": sum(values) / len(values) if values else None,
        "min": min(values, default=None),
        "max": max(values, default=None),
    }


def stages(
    timings: list[Timing], marks: dict[str, dict[str, float]]
) -> list[dict[str, Any]]:
    """Each span of ``SPANS`` over the submissions that have both its stamps."""
    stamped = []
    for timing in timings:
        stamps = dict(marks.get(timing.response_id, {}))
        stamps.update(submitted=timing.submitted, first_seen=timing.first_seen)
        stamped.append(stamps)
    return [
        {
            "span": label,
            "ms": summarize_ms(
                [s[end] - s[start] for s in stamped if start in s and end in s]
            ),
        }
        for label, start, end in SPANS
    ]


def measure(
    requests: int,
    log: Log,
    *,
    rate: float = DEFAULT_RATE,
    apis: int = DEFAULT_APIS,
    workers: int = DEFAULT_WORKERS,
    warmup: int = WARMUP_REQUESTS,
) -> dict[str, Any]:
    """The background-latency figures of ``requests`` submissions."""
    with (
        tempfile.TemporaryDirectory(prefix="lgos-bench-bg-") as folder,
        fleet(Path(folder), log, apis=apis, workers=workers) as running,
    ):
        background_marks.install(running.database.url)
        timings, errors = asyncio.run(drive(running.apis, requests, rate, warmup, log))
        marks = background_marks.read(running.database.url)
    return {
        "requests": len(timings),
        "warmup": warmup,
        "tokens": BENCH_TOKENS,
        "rate": rate,
        "apis": apis,
        "workers": workers,
        "errors": errors,
        "first_event_ms": summarize_ms([t.first_seen - t.submitted for t in timings]),
        "last_event_ms": summarize_ms([t.last_seen - t.submitted for t in timings]),
        "accepted_ms": summarize_ms([t.accepted - t.submitted for t in timings]),
        "late_ms": summarize_ms([t.late for t in timings]),
        "stages": stages(timings, marks),
    }


def run(requests: int, log: Log, **options: Any) -> dict[str, Any]:
    meta = run_meta("background")
    return {"meta": meta, "background": measure(requests, log, **options)}


def _row(label: str, ms: dict[str, float | None]) -> str:
    cells = [fmt(ms[key], 1) for key in ("p50", "p99", "mean", "min", "max")]
    return f"| {label} | " + " | ".join(cells) + " |"


def render(results: dict[str, Any]) -> str:
    meta, figures = results["meta"], results["background"]
    first = figures["first_event_ms"]
    lines = [
        "# lgos-bench: background Responses across processes, on PostgreSQL",
        "",
        run_preamble(meta)
        + f" {figures['apis']} `lgos serve`, {figures['workers']} `lgos "
        "worker`, PostgreSQL on loopback (LISTEN/NOTIFY). "
        f"{figures['requests']} `background=true` submissions of "
        f"{figures['tokens']} tokens at {figures['rate']:g} per second, each "
        "followed (`GET /v1/responses/{id}?stream=true`) on the other API "
        f"process, after {figures['warmup']} warm-up submissions; "
        f"{len(figures['errors'])} errors.",
        "",
        "| latency | p50 ms | p99 ms | mean ms | min ms | max ms |",
        "|---|---|---|---|---|---|",
        _row("submit → first event on the other process", first),
        _row("submit → last event", figures["last_event_ms"]),
        _row("POST answered (queued)", figures["accepted_ms"]),
        _row("submission sent late (client)", figures["late_ms"]),
        "",
        "Where the first event's time goes (stamped by the database as each "
        "row is written; `background_marks.py`):",
        "",
        "| span | p50 ms | p99 ms | mean ms | min ms | max ms |",
        "|---|---|---|---|---|---|",
        *(_row(stage["span"], stage["ms"]) for stage in figures["stages"]),
        "",
        "| target | limit | value | met |",
        "|---|---|---|---|",
    ]
    for key, limit in (("p50", TARGET_P50_MS), ("p99", TARGET_P99_MS)):
        value = first[key]
        met = "yes" if value is not None and value <= limit else "NO"
        lines.append(
            f"| submit → first event on the other process, {key} | <= {limit:g} ms "
            f"| {fmt(value, 1)} | {met} |"
        )
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-background.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
