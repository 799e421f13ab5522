"""Memory per idle open stream: K streams against a graph that waits.

Run against a freshly started server (after a short warm-up), so the streams'
memory is not hidden in heap left free by earlier load. Each stream is held
open until every one has received its first frame and the server has settled;
then RSS is read and the client closes them all (the servers cancel the runs,
or the graph's bounded wait ends them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from lgos_bench.load import client_for, run_load
from lgos_bench.procstat import Usage
from lgos_bench.scenarios import Api, target
from lgos_bench.servers import Placement, ServerProcess
from lgos_bench.workload import IDLE, PLAIN, Workload

SETTLE_SECONDS = 0.5
OPEN_TIMEOUT = 30.0


async def _hold(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    opened: asyncio.Queue[None],
    release: asyncio.Event,
) -> None:
    headers = {"content-type": "application/json"}
    async with client.stream("POST", url, content=body, headers=headers) as response:
        chunks = response.aiter_raw()
        await anext(chunks)
        opened.put_nowait(None)
        await release.wait()


async def _warm(server: ServerProcess, api: Api) -> None:
    async with client_for(4) as client:
        for stream in (True, False):
            await run_load(
                client,
                server.base_url,
                target(api, PLAIN, stream=stream),
                concurrency=4,
                max_requests=20,
                max_seconds=10.0,
            )


async def idle_stream_memory(
    server: ServerProcess, api: Api, streams: int
) -> dict[str, float]:
    """RSS before and with ``streams`` idle streams open, and the cost of one."""
    await _warm(server, api)
    await asyncio.sleep(SETTLE_SECONDS)
    before: Usage = server.usage()
    idle = target(api, IDLE, stream=True)
    url = server.base_url + idle.path
    opened: asyncio.Queue[None] = asyncio.Queue()
    release = asyncio.Event()
    async with client_for(streams) as client:
        holders = [
            asyncio.create_task(_hold(client, url, idle.body, opened, release))
            for _ in range(streams)
        ]
        try:
            async with asyncio.timeout(OPEN_TIMEOUT):
                for _ in range(streams):
                    await opened.get()
            await asyncio.sleep(SETTLE_SECONDS)
            during = server.usage()
        finally:
            release.set()
            await asyncio.gather(*holders, return_exceptions=True)
    delta = during.rss_bytes - before.rss_bytes
    return {
        "streams": float(streams),
        "rss_before_mib": before.rss_bytes / 2**20,
        "rss_open_mib": during.rss_bytes / 2**20,
        "kib_per_stream": delta / 1024 / streams,
    }


def idle_phase(
    workload: Workload,
    placement: Placement,
    apis: tuple[Api, ...],
    streams: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Per API: the baseline's and LGOS's memory per idle stream, each on a
    freshly started server, and their ratio."""
    results: dict[str, Any] = {}
    for api in apis:
        row: dict[str, Any] = {}
        for kind in ("baseline", "lgos"):
            server = ServerProcess(kind, 1, workload, placement).start()
            try:
                row[kind] = asyncio.run(idle_stream_memory(server, api, streams))
            finally:
                server.stop()
        base, lgos = row["baseline"]["kib_per_stream"], row["lgos"]["kib_per_stream"]
        row["ratio"] = lgos / base if base > 0 else None
        log(f"  {api}: KiB per idle stream base {base:.1f} lgos {lgos:.1f}")
        results[api] = row
    return results
