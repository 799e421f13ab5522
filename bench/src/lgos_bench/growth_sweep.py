"""The retention sweep on the grown database, and submits beside it.

``lgos responses-cleanup`` (the real command, a process of its own, with
the default ``LGOS_RESPONSE_RETENTION`` of 30 days) deletes the grown
database's expired Responses, every generated one. Meanwhile this process
submits background Responses one after the other, as ``growth_ops``'s
submit does: fresh ones (a new Idempotency-Key), and ones reusing the key of
an expired background Response the sweep has yet to delete or is deleting
(a client that derives its keys from the request: the submit releases the
old row's key, so it must touch a row the sweep may hold). The same submits
run for a while before the sweep, as the reference.

Reported: each kind's latency (median, p99, max) before and during the
sweep, how many waited a second or more, the sweep's time and rows, and its
longest transaction (``pg_stat_activity``'s ``xact_start`` of the command's
connections, read every 50 ms).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
import uuid
from typing import Any

import psycopg

from lgos_bench.figures import percentile
from lgos_bench.growth_data import Sizes
from lgos_bench.growth_ops import TENANT_LIMIT, Subject, _message

APPLICATION = "lgos-bench-sweep"
"""The sweep's connections' ``application_name`` (libpq's ``PGAPPNAME``)."""
SLOW = 1.0
"""A submit this long (seconds) counts as held up."""


def _summary(latencies: list[float]) -> dict[str, Any]:
    ms = [value * 1000 for value in latencies]
    return {
        "count": len(ms),
        "median_ms": percentile(ms, 50),
        "p99_ms": percentile(ms, 99),
        "max_ms": max(ms, default=None),
        "held_up": sum(value >= SLOW for value in latencies),
    }


async def _submit(subject: Subject, scope: str, key: str) -> float:
    from langgraph_openai_serve.openai.responses.background.task import response_job
    from langgraph_openai_serve.responses.protocol import BackgroundJob

    submitted = f"resp_{uuid.uuid4().hex}"
    queue = subject.backend.jobs

    async def enqueue(transaction: Any) -> None:
        await queue.defer([response_job(submitted, scope, first=True)], transaction)

    began = time.perf_counter()
    await subject.backend.responses.create(
        BackgroundJob(submitted, scope, {"model": "bench-plain", "input": "hi"}),
        {"id": submitted, "object": "response", "status": "queued", "output": []},
        idempotency_key=key,
        body_digest="digest",
        enqueue=enqueue,
        input_items=[_message("user", "hi")],
        most_unfinished=TENANT_LIMIT,
    )
    took = time.perf_counter() - began
    async with await subject.backend.database.connection() as conn:
        # Untimed: the run would end it; its job leaves the queue as it was.
        await conn.execute(
            "DELETE FROM procrastinate_jobs WHERE lock = %s AND status = 'todo'",
            (submitted,),
        )
        await conn.execute(
            "UPDATE lgos_background_responses SET snapshot = "
            "jsonb_set(snapshot, '{status}', '\"completed\"') WHERE id = %s",
            (submitted,),
        )
    return took


def expired_keys(sizes: Sizes) -> list[tuple[str, str]]:
    """The scope and Idempotency-Key of every generated background Response
    (chains numbered 9 mod 10, ``growth_data``), in a random order."""
    chains = max(1, sizes.responses // sizes.chain)
    keys = [
        (f"tenant-{chain % sizes.tenants}", f"idem-{chain}-{turn}")
        for chain in range(9, chains, 10)
        for turn in range(sizes.chain)
    ]
    random.Random(48).shuffle(keys)
    return keys


class _Submitter:
    """Fresh and key-reusing submits, alternately, until stopped; the reused
    keys are taken from ``keys`` (each once)."""

    def __init__(self, subject: Subject, keys: list[tuple[str, str]]) -> None:
        self.subject = subject
        self._keys = keys
        self.fresh: list[float] = []
        self.reused: list[float] = []

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            key = f"bench-{uuid.uuid4().hex}"
            self.fresh.append(await _submit(self.subject, "tenant-0", key))
            if self._keys:
                scope, old = self._keys.pop()
                self.reused.append(await _submit(self.subject, scope, old))
            await asyncio.sleep(0.02)


async def _longest_transaction(url: str, stop: asyncio.Event) -> float:
    """The oldest open transaction of the sweep's connections, in seconds,
    the longest seen until ``stop``."""
    longest = 0.0
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            cursor = await conn.execute(
                "SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0) "
                "FROM pg_stat_activity WHERE application_name = %s",
                (APPLICATION,),
            )
            row = await cursor.fetchone()
            longest = max(longest, float(row[0]) if row else 0.0)
            await asyncio.sleep(0.05)
    return longest


async def sweep(
    url: str, subject: Subject, sizes: Sizes, log: Any, *, alone_s: float
) -> dict[str, Any]:
    """Submits alone for ``alone_s`` seconds, then beside ``lgos
    responses-cleanup``; the figures."""
    log(f"sweep: submits alone for {alone_s:.0f} s")
    keys = expired_keys(sizes)
    alone = _Submitter(subject, keys)
    stop = asyncio.Event()
    task = asyncio.create_task(alone.run(stop))
    await asyncio.sleep(alone_s)
    stop.set()
    await task

    log("sweep: lgos responses-cleanup, submits beside it")
    beside = _Submitter(subject, keys)
    stop = asyncio.Event()
    env = {
        **os.environ,
        "LGOS_DATABASE_URL": url,
        "LGOS_RESPONSE_STORE": "postgres",
        "LGOS_BACKGROUND_BACKEND": "postgres",
        "PGAPPNAME": APPLICATION,
    }
    began = time.monotonic()
    cleanup = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "langgraph_openai_serve.cli",
        "responses-cleanup",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    submits = asyncio.create_task(beside.run(stop))
    watch = asyncio.create_task(_longest_transaction(url, stop))
    try:
        out, err = await cleanup.communicate()
    finally:
        if cleanup.returncode is None:
            cleanup.terminate()  # by its PID
            await cleanup.wait()
        swept = time.monotonic() - began
        stop.set()
        await submits
        longest = await watch
    if cleanup.returncode != 0:
        raise RuntimeError(f"lgos responses-cleanup failed:\n{err.decode()[-2000:]}")
    words = out.decode().split()
    deleted = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
    log(f"sweep: {deleted} deleted in {swept:.1f} s")
    return {
        "deleted": deleted,
        "seconds": swept,
        "longest_transaction_s": longest,
        "before": {"fresh": _summary(alone.fresh), "reused": _summary(alone.reused)},
        "during": {"fresh": _summary(beside.fresh), "reused": _summary(beside.reused)},
    }
