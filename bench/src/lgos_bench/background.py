"""How soon a follower of a background Response sees its first event.

``lgos-bench background`` starts a throwaway PostgreSQL (the stack's
``lgos_stack.postgres``), ``lgos db-setup``, one ``lgos serve`` and one
``lgos worker`` on the PostgreSQL backend, then sends ``POST /v1/responses``
with ``background=true, stream=true`` for the plain graph, one at a time. The
stream a client gets is the API process following the store while the worker
runs the job, so *submit to first event* is: the submit's transaction, the
queue handing the job to the worker, the worker's first stored event, and the
follower noticing it. Each stream is read to its end before the next request,
so runs do not overlap; the first ``warmup`` requests are not counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
from lgos_stack.net import STARTUP_SECONDS, free_port, wait_until
from lgos_stack.postgres import database_url
from lgos_stack.processes import running

from lgos_bench.figures import percentile
from lgos_bench.report import RESULTS_DIR, fmt, write_pair
from lgos_bench.suite import background_cores, library_revision
from lgos_bench.workload import PLAIN, Workload

DEFAULT_REQUESTS = 200
WARMUP_REQUESTS = 5
BENCH_TOKENS = 8
"""A short answer: the figure is about the first event, not the stream."""
REGISTRY = "lgos_bench.lgos_app:background_registry"
_BODY = json.dumps(
    {"model": PLAIN, "input": "Say something.", "background": True, "stream": True}
).encode()
_HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Timing:
    first_event: float
    last_event: float


def read_stream(client: httpx.Client, url: str) -> Timing:
    """Submit one background streaming request and read its stream to the end.

    Raises ``ValueError`` when the stream does not end ``response.completed``.
    """
    began = time.perf_counter()
    first: float | None = None
    last_event = ""
    with client.stream("POST", url, content=_BODY, headers=_HEADERS) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("event:"):
                if first is None:
                    first = time.perf_counter() - began
                last_event = line.removeprefix("event:").strip()
    if first is None or last_event != "response.completed":
        raise ValueError(f"the stream ended with {last_event or 'no event'!r}")
    return Timing(first, time.perf_counter() - began)


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


def _lgos(*args: str) -> list[str]:
    return [sys.executable, "-m", "langgraph_openai_serve.cli", *args]


def _accepts_connections(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


@dataclass(frozen=True, slots=True)
class Database:
    url: str
    pid: int
    """The PostgreSQL launcher's; its process tree is the server's."""


@contextmanager
def postgres_database(folder: Path, log: Log) -> Iterator[Database]:
    """A throwaway PostgreSQL with LGOS's tables (``lgos db-setup``)."""
    pg_port = free_port()
    url = database_url("127.0.0.1", pg_port)
    postgres = [sys.executable, "-m", "lgos_stack.postgres"]
    postgres += ["--data", str(folder / "data"), "--port", str(pg_port)]
    with running(postgres, log=folder / "postgres.log", name="PostgreSQL") as started:
        wait_until(lambda: _accepts_connections(url), STARTUP_SECONDS, "PostgreSQL")
        log("PostgreSQL is up; lgos db-setup")
        env = {**os.environ, "LGOS_DATABASE_URL": url}
        subprocess.run(_lgos("db-setup"), env=env, check=True, timeout=120)
        yield Database(url, started.pid)


@contextmanager
def background_stack(folder: Path, log: Log) -> Iterator[str]:
    """PostgreSQL, ``lgos serve`` and ``lgos worker``; yields the API's base URL."""
    api_port = free_port()
    env = {
        **os.environ,
        "LGOS_REGISTRY": REGISTRY,
        "LGOS_BACKGROUND_BACKEND": "postgres",
        "LGOS_LOG_LEVEL": "WARNING",
        **Workload(tokens=BENCH_TOKENS).env(),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with postgres_database(folder, log) as database:
        env["LGOS_DATABASE_URL"] = database.url
        base = f"http://127.0.0.1:{api_port}/v1"
        serve = _lgos("serve", "--port", str(api_port))
        with (
            running(
                serve,
                log=folder / "serve.log",
                name="lgos serve",
                env=env,
                health_url=f"{base}/health",
            ),
            running(
                _lgos("worker"), log=folder / "worker.log", name="lgos worker", env=env
            ),
        ):
            yield base


def measure(requests: int, log: Log, warmup: int = WARMUP_REQUESTS) -> dict[str, Any]:
    """The background-latency figures of ``requests`` sequential submissions."""
    timings: list[Timing] = []
    errors: list[str] = []
    with (
        tempfile.TemporaryDirectory(prefix="lgos-bench-bg-") as folder,
        background_stack(Path(folder), log) as base,
        httpx.Client(timeout=120.0) as client,
    ):
        url = f"{base}/responses"
        log(f"warming up ({warmup} requests; the first waits for the worker)")
        for _ in range(warmup):
            read_stream(client, url)
        log(f"measuring {requests} background streams, one at a time")
        for _ in range(requests):
            try:
                timings.append(read_stream(client, url))
            except (httpx.HTTPError, ValueError) as error:
                errors.append(str(error))
    return {
        "requests": len(timings),
        "warmup": warmup,
        "tokens": BENCH_TOKENS,
        "errors": errors,
        "first_event_ms": summarize_ms([t.first_event for t in timings]),
        "last_event_ms": summarize_ms([t.last_event for t in timings]),
    }


def run(requests: int, log: Log) -> dict[str, Any]:
    meta = {
        "mode": "background",
        "lgos_revision": library_revision(),
        "background_cores_before": round(background_cores(), 2),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return {"meta": meta, "background": measure(requests, log)}


def render(results: dict[str, Any]) -> str:
    meta, figures = results["meta"], results["background"]
    rows = [
        ("submit → first event", figures["first_event_ms"]),
        ("submit → last event", figures["last_event_ms"]),
    ]
    lines = [
        "# lgos-bench: background Responses on PostgreSQL",
        "",
        f"LGOS {meta['lgos_revision']}, started {meta['started']}; other "
        f"processes kept {meta['background_cores_before']} cores busy before the "
        "run. One `lgos serve`, one `lgos worker`, PostgreSQL on loopback; "
        f"{figures['requests']} sequential `background=true, stream=true` "
        f"requests of {figures['tokens']} tokens after {figures['warmup']} "
        f"warm-up requests; {len(figures['errors'])} errors.",
        "",
        "| latency | p50 ms | p99 ms | mean ms | min ms | max ms |",
        "|---|---|---|---|---|---|",
    ]
    for label, ms in rows:
        cells = [fmt(ms[key], 1) for key in ("p50", "p99", "mean", "min", "max")]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-background.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
