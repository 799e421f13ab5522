"""The in-process ceiling: the work without sockets, in this process.

- ``graph.astream`` (the stream modes a streaming server needs: messages and
  values) and ``graph.ainvoke`` of the plain graph: what any server must spend.
- Each server's ASGI app called directly, with a receive/send pair and no
  uvicorn, sockets or HTTP client: the app's own cost per request, so the
  difference between the two apps is LGOS's protocol layer alone. Every graph
  is measured this way, which prices commentary, citations and tool calls
  without the noise of a loaded machine.

Runs on the load-generator core; CPU is ``time.process_time``, the cheapest
of three interleaved batches.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessageChunk, HumanMessage
from starlette.types import Message

from lgos_bench import baseline_app, lgos_app
from lgos_bench.load import Target
from lgos_bench.scenarios import APIS, VARIANTS, target
from lgos_bench.workload import PLAIN, AnyGraph, Workload, build_graphs

_STREAM_MODES: Any = ["messages", "values"]
APPS: dict[str, Callable[[Workload], FastAPI]] = {
    "baseline": baseline_app.create_app,
    "lgos": lgos_app.create_app,
}


def _inputs() -> dict[str, Any]:
    return {"messages": [HumanMessage(content="Say something long.")]}


async def _stream_once(graph: AnyGraph) -> None:
    async for mode, data in graph.astream(_inputs(), stream_mode=_STREAM_MODES):
        if mode == "messages" and isinstance(data[0], AIMessageChunk):
            _ = data[0].text


async def _invoke_once(graph: AnyGraph) -> None:
    await graph.ainvoke(_inputs())


async def call_app(app: FastAPI, request: Target) -> None:
    """One request straight into the ASGI app; fails unless it succeeded."""
    body = request.body
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1" + request.path,
        "raw_path": ("/v1" + request.path).encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"bench"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    sent = False
    finished = asyncio.Event()
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                finished.set()

    await app(scope, receive, send)
    if request.done_marker not in b"".join(chunks):
        raise RuntimeError(f"{request.path} failed in process: {chunks[:1]!r}")


BATCHES = 3
"""Runs are split into batches; the cheapest batch counts, since whatever else
the machine does can only add to a batch's CPU time."""


async def _timed_many(
    calls: Mapping[str, Callable[[], Awaitable[None]]], runs: int
) -> dict[str, dict[str, float]]:
    """CPU and wall time per run of each call, batches interleaved."""
    for call in calls.values():
        await call()  # warm caches and lazy imports
    size = max(1, runs // BATCHES)
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    wall: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(BATCHES):
        for name, call in calls.items():
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(size):
                await call()
            wall[name].append((time.perf_counter() - wall0) / size)
            cpu[name].append((time.process_time() - cpu0) / size)
    return {
        name: {
            "runs": float(size * BATCHES),
            "runs_per_s": 1 / min(wall[name]),
            "cpu_ms_per_run": min(cpu[name]) * 1000,
            "wall_ms_per_run": min(wall[name]) * 1000,
        }
        for name in calls
    }


async def _apps(workload: Workload, runs: int) -> dict[str, Any]:
    """Every graph, API and mode through both apps, interleaved by batch."""
    results: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        apps = {}
        for kind, factory in APPS.items():
            app = apps[kind] = factory(workload)
            await stack.enter_async_context(app.router.lifespan_context(app))
        for model in (PLAIN, *VARIANTS):
            n = runs if model == PLAIN else max(BATCHES, runs // 2)
            for api in APIS:
                for stream in (True, False):
                    request = target(api, model, stream=stream)
                    mode = "stream" if stream else "json"
                    key = f"{api}/{mode}/{model.removeprefix('bench-')}"
                    calls = {
                        kind: partial(call_app, app, request)
                        for kind, app in apps.items()
                    }
                    row: dict[str, Any] = await _timed_many(calls, n)
                    row["ratio"] = (
                        row["lgos"]["cpu_ms_per_run"]
                        / row["baseline"]["cpu_ms_per_run"]
                    )
                    results[key] = row
    return results


async def ceiling(workload: Workload, runs: int) -> dict[str, Any]:
    """The graph alone, then both apps without sockets, ``runs`` times each."""
    graph = build_graphs(workload)[PLAIN]
    alone = await _timed_many(
        {
            "astream": partial(_stream_once, graph),
            "ainvoke": partial(_invoke_once, graph),
        },
        runs,
    )
    return {**alone, "apps": await _apps(workload, runs)}


def run_ceiling(workload: Workload, runs: int) -> dict[str, Any]:
    return asyncio.run(ceiling(workload, runs))
