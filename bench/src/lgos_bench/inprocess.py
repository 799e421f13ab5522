"""The in-process ceiling: the work without sockets, in this process.

- ``graph.astream`` (the stream modes a streaming server needs: messages and
  values) and ``graph.ainvoke`` of the plain graph: what any server must spend.
- Each server's ASGI app called directly, with a receive/send pair and no
  uvicorn, sockets or HTTP client: the app's own cost per request, so the
  difference between the two apps is LGOS's protocol layer alone. Every graph
  is measured this way, which prices commentary, citations and tool calls
  without the noise of a loaded machine.

Runs on the load-generator core; CPU is ``time.process_time``, the calls
compared alternated one by one (``alternate``).
``lgos-bench inprocess`` (``compare.py``) measures the same way with more
rounds and reports the spread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from functools import partial
from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessageChunk, HumanMessage
from starlette.types import Message

from lgos_bench import baseline_app, lgos_app
from lgos_bench.alternate import Batches, alternate, ratio_spread
from lgos_bench.load import Target
from lgos_bench.scenarios import APIS, VARIANTS, target
from lgos_bench.workload import PLAIN, AnyGraph, Workload, build_graphs

_STREAM_MODES: Any = ["messages", "values"]
WARMUP = 3
"""Calls per app and scenario before the rounds: the full run's ceiling
measures 16 of them, and the apps are warm after the first."""
APPS: dict[str, Callable[[Workload], FastAPI]] = {
    "baseline": baseline_app.create_app,
    "baseline-usage": baseline_app.create_same_work_app,
    "lgos": lgos_app.create_app,
}
"""The apps a measurement can build: the plain baseline, the same-work
baseline (usage over every model call, ``baseline_app``) and LGOS."""
CEILING_APPS = ("baseline", "lgos")
"""The apps of the full run's in-process ceiling."""


def _inputs() -> dict[str, Any]:
    return {"messages": [HumanMessage(content="Say something long.")]}


async def _stream_once(graph: AnyGraph) -> None:
    async for mode, data in graph.astream(_inputs(), stream_mode=_STREAM_MODES):
        if mode == "messages" and isinstance(data[0], AIMessageChunk):
            _ = data[0].text


async def _invoke_once(graph: AnyGraph) -> None:
    await graph.ainvoke(_inputs())


async def call_app(app: FastAPI, request: Target) -> bytes:
    """One request straight into the ASGI app: its body; fails unless it
    succeeded."""
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
    answer = b"".join(chunks)
    if request.done_marker not in answer:
        raise RuntimeError(f"{request.path} failed in process: {chunks[:1]!r}")
    return answer


async def _apps(workload: Workload, runs: int) -> dict[str, Any]:
    """Every graph, API and mode through both apps, alternated by round."""
    results: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        apps = {}
        for kind in CEILING_APPS:
            app = apps[kind] = APPS[kind](workload)
            await stack.enter_async_context(app.router.lifespan_context(app))
        for model in (PLAIN, *VARIANTS):
            n = runs if model == PLAIN else max(1, runs // 2)
            for api in APIS:
                for stream in (True, False):
                    request = target(api, model, stream=stream)
                    mode = "stream" if stream else "json"
                    key = f"{api}/{mode}/{model.removeprefix('bench-')}"
                    calls = {
                        kind: partial(call_app, app, request)
                        for kind, app in apps.items()
                    }
                    measured = await alternate(calls, rounds=n, warmup=WARMUP)
                    row: dict[str, Any] = {
                        kind: _figures(batches) for kind, batches in measured.items()
                    }
                    spread = ratio_spread(measured["lgos"], measured["baseline"])
                    row["ratio"] = spread["ratio"]
                    row["spread"] = spread
                    results[key] = row
    return results


def _figures(batches: Batches) -> dict[str, float]:
    """Mean figures of one call over its rounds (the keys the reports read)."""
    return {
        "runs": float(len(batches.cpu)),
        "runs_per_s": 1000 / batches.wall_ms,
        "cpu_ms_per_run": batches.cpu_ms,
        "wall_ms_per_run": batches.wall_ms,
    }


async def ceiling(workload: Workload, runs: int) -> dict[str, Any]:
    """The graph alone, then both apps without sockets, ``runs`` times each."""
    graph = build_graphs(workload)[PLAIN]
    alone = await alternate(
        {
            "astream": partial(_stream_once, graph),
            "ainvoke": partial(_invoke_once, graph),
        },
        rounds=runs,
        warmup=WARMUP,
    )
    figures = {name: _figures(batches) for name, batches in alone.items()}
    return {**figures, "apps": await _apps(workload, runs)}


def run_ceiling(workload: Workload, runs: int) -> dict[str, Any]:
    return asyncio.run(ceiling(workload, runs))
