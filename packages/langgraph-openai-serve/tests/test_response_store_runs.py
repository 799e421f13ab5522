"""The ``ResponseStore`` keeps one live Response per scope and interrupt run,
on every backend (the ``backend`` fixture of ``backend_fixtures.py``): a
run is busy only in the scope that drives it (another tenant's run id is
one nobody uses), and of two submits racing for one run exactly one is
stored, whichever process each comes through (on PostgreSQL a unique index
decides, not a read before the write)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.backends.postgres.response_rows import DRIVES
from langgraph_openai_serve.backends.postgres.schema import MIGRATIONS, statements
from langgraph_openai_serve.graph.errors import RunBusyError
from langgraph_openai_serve.responses.protocol import BackgroundJob
from lgos_testkit import async_wait_until
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(backend):
    return backend.responses


def _job(scope: str, run: str) -> BackgroundJob:
    return BackgroundJob(f"resp_{uuid.uuid4().hex}", scope, {}, run_id=run)


def _queued(job: BackgroundJob) -> dict[str, Any]:
    return {"id": job.response_id, "status": "queued", "background": True}


async def test_a_run_is_busy_only_in_the_scope_that_drives_it(store):
    run = uuid.uuid4().hex
    alices = _job("alice", run)
    await store.create(alices, _queued(alices))

    bobs = _job("bob", run)
    _, created = await store.create(bobs, _queued(bobs))
    again = _job("alice", run)
    with pytest.raises(RunBusyError):
        await store.create(again, _queued(again))

    assert created  # the same run id in another scope is another run
    assert await store.drives("alice", run)
    assert await store.drives("bob", run)
    assert not await store.drives("carol", run)
    assert not await store.drives("alice", uuid.uuid4().hex)


async def test_a_run_is_free_again_once_its_response_ends(store):
    run = uuid.uuid4().hex
    first = _job("alice", run)
    await store.create(first, _queued(first))
    await store.set_snapshot(first.response_id, {**_queued(first), "status": "failed"})

    second = _job("alice", run)
    _, created = await store.create(second, _queued(second))

    assert created
    assert await store.drives("alice", run)
    await store.delete(second.response_id, "alice")
    assert not await store.drives("alice", run)


async def _waits_for_a_lock(uri: str) -> bool:
    """Whether some session of the database waits for a lock (a second
    INSERT waiting on the first's uncommitted row in a unique index)."""
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = await cursor.fetchone()
        return row is not None and row[0] > 0


async def test_of_two_racing_submits_of_one_run_exactly_one_is_stored(
    store, on_postgres, postgres_uri
):
    run = uuid.uuid4().hex
    release = asyncio.Event()
    queued: list[object] = []

    async def enqueue(transaction: object) -> None:
        # The first submit holds its transaction open here, after its
        # write, while the second one comes.
        queued.append(transaction)
        await release.wait()

    jobs = [_job("alice", run), _job("alice", run)]
    first = asyncio.create_task(
        store.create(jobs[0], _queued(jobs[0]), enqueue=enqueue)
    )

    async def first_is_queueing() -> bool:
        return len(queued) == 1

    await async_wait_until(first_is_queueing, 30, "the first submit's write")
    second = asyncio.create_task(
        store.create(jobs[1], _queued(jobs[1]), enqueue=enqueue)
    )

    async def second_decided_or_waits() -> bool:
        # Refused already, stored beside the first (the race lost), or (on
        # PostgreSQL) waiting for the first to commit.
        return (
            second.done()
            or len(queued) == 2
            or (on_postgres and await _waits_for_a_lock(postgres_uri))
        )

    await async_wait_until(second_decided_or_waits, 30, "the second submit")
    release.set()
    outcomes = await asyncio.gather(first, second, return_exceptions=True)

    assert outcomes[0] == (_queued(jobs[0]), True)
    assert isinstance(outcomes[1], RunBusyError), outcomes[1]
    assert await store.get(jobs[1].response_id, "alice") is None
    assert len(queued) == 1


def _live_run_migration() -> int:
    return next(i for i, m in enumerate(MIGRATIONS) if "lgos_background_live_run" in m)


async def test_setup_ends_live_duplicates_of_a_run_left_by_the_old_race(
    empty_database,
):
    """A database that the old check let hold two live Responses of one run
    still sets up: the older keeps the run, the newer ends failed."""
    before = _live_run_migration()
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE lgos_migrations (version integer PRIMARY KEY, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version in range(before):
            for statement in statements(MIGRATIONS[version]):
                conn.execute(statement)
            conn.execute("INSERT INTO lgos_migrations VALUES (%s)", (version,))
        for response_id, age in (("resp_older", "2 minutes"), ("resp_newer", "1 s")):
            conn.execute(
                "INSERT INTO lgos_background_responses "
                "(id, scope, job, snapshot, created_at) VALUES "
                "(%s, 'alice', %s, %s, now() - %s::interval)",
                (
                    response_id,
                    Jsonb(
                        {
                            "response_id": response_id,
                            "scope": "alice",
                            "body": {},
                            "run_id": "ab" * 16,
                        }
                    ),
                    Jsonb({"id": response_id, "status": "queued"}),
                    age,
                ),
            )
    backend = PostgresBackend(empty_database)
    try:
        await backend.setup()
        older = await backend.responses.get("resp_older", "alice")
        newer = await backend.responses.get("resp_newer", "alice")
        third = _job("alice", "ab" * 16)
        with pytest.raises(RunBusyError):
            await backend.responses.create(third, _queued(third))
    finally:
        await backend.close()

    assert older == {"id": "resp_older", "status": "queued"}
    assert newer is not None
    assert (newer["status"], newer["error"]["code"]) == ("failed", "run_busy")


async def test_the_busy_lookup_reads_the_live_run_index(postgres_backend_factory):
    """A foreground resume asks whether its run is driven: that answer must
    come from the index, not a scan of every kept Response."""
    backend: PostgresBackend = await postgres_backend_factory()

    async with await backend.database.connection() as conn:
        await conn.execute("SET enable_seqscan = off")
        cursor = await conn.execute("EXPLAIN " + DRIVES.replace("%s", "'x'"))
        plan = "\n".join(row["QUERY PLAN"] for row in await cursor.fetchall())
        await conn.execute("RESET enable_seqscan")

    # Through an index (the live-run one, or the scope's unfinished ones:
    # the planner picks either), never a scan of every kept Response.
    assert "Seq Scan" not in plan, plan
    assert "Index" in plan, plan
