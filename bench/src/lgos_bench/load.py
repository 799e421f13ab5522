"""The load generator: asyncio + httpx against one loopback server.

``concurrency`` workers share one connection pool and each sends requests
back to back until either ``max_requests`` have been started or
``max_seconds`` have passed; requests in flight then finish. Each request
records its latency, its time to first byte (response headers) and, when
streaming, its time to the first text delta and how many deltas it carried.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import httpx

_HEADERS = {"content-type": "application/json", "authorization": "Bearer bench"}


@dataclass(frozen=True, slots=True)
class Target:
    """One kind of request and how to read its answer."""

    path: str
    body: bytes
    stream: bool
    delta_marker: bytes
    """Bytes that start every text-delta frame (counted in streamed bodies)."""
    done_marker: bytes
    """Bytes a complete, successful answer contains."""


@dataclass(frozen=True, slots=True)
class Sample:
    latency: float
    ttfb: float
    first_delta: float | None
    deltas: int


@dataclass
class LoadResult:
    samples: list[Sample] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0


def client_for(concurrency: int) -> httpx.AsyncClient:
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency
    )
    return httpx.AsyncClient(limits=limits, timeout=60.0)


async def send(client: httpx.AsyncClient, url: str, target: Target) -> Sample:
    """One request, timed; raises ``ValueError`` on a failed answer."""
    marker = target.delta_marker
    first_delta: float | None = None
    body = bytearray()
    started = time.perf_counter()
    async with client.stream("POST", url, content=target.body, headers=_HEADERS) as r:
        ttfb = time.perf_counter() - started
        async for chunk in r.aiter_raw():
            if first_delta is None and target.stream:
                look_from = max(0, len(body) - len(marker))
                body += chunk
                if body.find(marker, look_from) >= 0:
                    first_delta = time.perf_counter() - started
            else:
                body += chunk
        latency = time.perf_counter() - started
        if r.status_code != 200 or target.done_marker not in body:
            raise ValueError(f"HTTP {r.status_code}: {bytes(body[:200])!r}")
    deltas = body.count(marker) if target.stream else 0
    return Sample(latency, ttfb, first_delta, deltas)


async def run_load(
    client: httpx.AsyncClient,
    base_url: str,
    target: Target,
    *,
    concurrency: int,
    max_requests: int,
    max_seconds: float,
) -> LoadResult:
    """Drive ``target`` at ``concurrency``, bounded by count and by time."""
    url = base_url + target.path
    result = LoadResult()
    started = 0
    deadline = time.perf_counter() + max_seconds

    async def worker() -> None:
        nonlocal started
        while started < max_requests and time.perf_counter() < deadline:
            started += 1
            try:
                result.samples.append(await send(client, url, target))
            except (httpx.HTTPError, ValueError) as exc:
                result.errors.append(f"{type(exc).__name__}: {exc}")

    begin = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    result.elapsed = time.perf_counter() - begin
    return result


async def warm(
    client: httpx.AsyncClient, base_url: str, target: Target, concurrency: int
) -> None:
    """Open ``concurrency`` connections and run each path once, unmeasured."""
    await run_load(
        client,
        base_url,
        target,
        concurrency=concurrency,
        max_requests=concurrency,
        max_seconds=30.0,
    )
