"""The retention sweep on PostgreSQL deletes in short transactions, so no
submit waits for the whole sweep (issue 48).

A sweep of a large store deletes for minutes. Were that one transaction,
every row it deleted would stay locked until its end: a submit reusing the
Idempotency-Key of an expired Response (its key is released, an UPDATE of
that row) would wait for all of it, and nothing would be deleted for good
until then. Here the sweep is held in its second batch (a row it must
delete is locked by another transaction), and what it did first is already
done and released.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres.responses import PostgresResponseStore
from langgraph_openai_serve.responses.protocol import BackgroundJob
from lgos_testkit import async_wait_until

pytestmark = pytest.mark.anyio

RETENTION = dt.timedelta(days=30)
SECONDS = 60.0
"""Bound on each wait below (none is reached when the sweep behaves; generous
for a machine whose cores are busy)."""


async def _ended_background(store: PostgresResponseStore, key: str) -> str:
    """A background Response submitted with ``key`` that ran and ended,
    with its stream events."""
    job = BackgroundJob(f"resp_{uuid.uuid4().hex}", "alice", {"input": "hi"})
    response_id = job.response_id
    await store.create(
        job, {"id": response_id, "status": "queued"}, idempotency_key=key
    )
    await store.set_snapshot(
        response_id,
        {"id": response_id, "status": "completed"},
        events=[{"type": "response.completed"}],
    )
    return response_id


async def _blocked_by(conn: psycopg.AsyncConnection, holder: int) -> None:
    """Wait until a statement waits for a lock ``holder`` (a backend pid) holds."""

    async def blocked() -> bool:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE %s = ANY(pg_blocking_pids(pid))",
            (holder,),
        )
        row = await cursor.fetchone()
        return bool(row and row[0])

    await async_wait_until(blocked, SECONDS, "the sweep to reach the held row")


async def test_a_held_sweep_has_committed_its_earlier_batches(
    postgres_backend_factory, postgres_uri
):
    backend = await postgres_backend_factory()
    store = PostgresResponseStore(backend.database, sweep_batch=1)
    first = await _ended_background(store, "key-first")
    held = await _ended_background(store, "key-held")
    last = await _ended_background(store, "key-last")
    async with await psycopg.AsyncConnection.connect(
        postgres_uri, autocommit=True
    ) as admin:
        # Expired, oldest first: first, held, last.
        for age, response_id in enumerate((first, held, last)):
            await admin.execute(
                "UPDATE lgos_background_responses SET created_at = "
                "now() - interval '40 days' + %s * interval '1 hour' WHERE id = %s",
                (age, response_id),
            )
        lock = await psycopg.AsyncConnection.connect(postgres_uri)
        try:
            # Another transaction holds one of the held Response's events:
            # the sweep's delete of it waits.
            await lock.execute(
                "SELECT 1 FROM lgos_background_events WHERE response_id = %s "
                "FOR UPDATE",
                (held,),
            )
            sweep = asyncio.create_task(
                store.delete_expired(dt.datetime.now(dt.UTC) - RETENTION)
            )
            await _blocked_by(admin, lock.info.backend_pid)

            # The first batch is gone for good, and its rows are free: a
            # submit reusing the expired key is stored at once.
            gone = await store.get(first, "alice")
            again = BackgroundJob(f"resp_{uuid.uuid4().hex}", "alice", {"input": "hi"})
            snapshot, created = await asyncio.wait_for(
                store.create(
                    again,
                    {"id": again.response_id, "status": "queued"},
                    idempotency_key="key-first",
                ),
                SECONDS,
            )
            not_yet = await store.get(last, "alice")
            assert not sweep.done()
        finally:
            await lock.close()  # its transaction ends: the sweep goes on
        deleted = await asyncio.wait_for(sweep, SECONDS)

    assert gone is None
    assert (created, snapshot["id"]) == (True, again.response_id)
    assert not_yet is not None
    assert deleted == 3
    assert await store.get(last, "alice") is None
    assert await store.get(again.response_id, "alice") is not None


async def test_the_sweep_goes_through_every_batch(
    postgres_backend_factory, postgres_uri
):
    backend = await postgres_backend_factory()
    store = PostgresResponseStore(backend.database, sweep_batch=2)
    expired = [await _ended_background(store, f"key-{n}") for n in range(5)]
    kept = await _ended_background(store, "key-kept")
    running = BackgroundJob(f"resp_{uuid.uuid4().hex}", "alice", {"input": "hi"})
    await store.create(running, {"id": running.response_id, "status": "in_progress"})
    async with await psycopg.AsyncConnection.connect(
        postgres_uri, autocommit=True
    ) as admin:
        await admin.execute(
            "UPDATE lgos_background_responses SET created_at = "
            "now() - interval '40 days' WHERE id = ANY(%s)",
            ([*expired, running.response_id],),
        )

    deleted = await store.delete_expired(dt.datetime.now(dt.UTC) - RETENTION)

    assert deleted == 5
    assert [await store.get(r, "alice") for r in expired] == [None] * 5
    assert await store.get(kept, "alice") is not None
    assert await store.get(running.response_id, "alice") is not None
