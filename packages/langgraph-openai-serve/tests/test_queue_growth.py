"""A worker's take on PostgreSQL stays cheap as the queue grows (issue 48).

How much a take reads is checked in index probes (``EXPLAIN (ANALYZE,
BUFFERS)``), which do not depend on the machine.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.backends.postgres.fair_fetch import (
    _FETCH,
    QUEUE,
    fair_parameters,
)
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import Job, Priority, Task

pytestmark = pytest.mark.anyio

TASK = "lgos.counted_task"


async def _never(args: dict[str, Any], attempts: int) -> None:
    raise AssertionError("these jobs are taken, never run")


def _no_retry(error: BaseException, attempts: int, args: dict[str, Any]) -> None:
    return None


def _job(
    key: str, tenant: str | None, priority: Priority, lock: str | None = None
) -> Job:
    return Job(TASK, {"key": key}, lock, None, priority, tenant)


@pytest.fixture
async def queue_backend(empty_database: str) -> AsyncIterator[PostgresBackend]:
    """A set-up backend on a database of its own, its queue open."""
    backend = PostgresBackend(empty_database)
    await backend.setup()
    backend.jobs.register(Task(TASK, _never, _no_retry))
    await backend.jobs.open()
    try:
        yield backend
    finally:
        await backend.close()


def _buffers(
    uri: str, statement: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The plan of ``statement`` run (and rolled back) with the plans a big
    table gets (no sequential scans), as JSON."""
    with psycopg.connect(uri) as conn:
        conn.execute("SET enable_seqscan = off")
        (plan,) = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement, params
        ).fetchone()
        conn.rollback()
    return plan[0]


def _queue_lines(uri: str, jobs_per_line: int, tenants: int) -> None:
    """``jobs_per_line`` batch-like jobs for each of ``tenants`` tenants at
    two priorities, each with a lock of its own, queued in one statement."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO procrastinate_jobs "
            "(queue_name, task_name, priority, lock, args) "
            "SELECT %s, %s, p, 'lock-' || t || '-' || p || '-' || n || '-' || %s, "
            "jsonb_build_object('key', n, 'lgos_tenant', 'tenant-' || t) "
            "FROM generate_series(1, %s) AS n, generate_series(1, %s) AS t, "
            "unnest(ARRAY[%s, %s]) AS p",
            (
                QUEUE,
                TASK,
                jobs_per_line,
                jobs_per_line,
                tenants,
                int(Priority.BULK),
                int(Priority.INTERACTIVE),
            ),
        )
        conn.execute("VACUUM ANALYZE procrastinate_jobs")


def _index_searches(node: dict[str, Any], index: str) -> int:
    own = node.get("Index Searches", 0) if node.get("Index Name") == index else 0
    return own + sum(_index_searches(child, index) for child in node.get("Plans", ()))


async def test_a_take_probes_each_waiting_line_once(queue_backend, empty_database):
    _queue_lines(empty_database, jobs_per_line=50, tenants=3)  # 6 lines
    worker = await queue_backend.jobs.app.job_manager.register_worker()
    params = {
        "worker_id": worker,
        "regular_slots": 2**31 - 1,
        **fair_parameters(FairShare()),
    }

    plan = _buffers(empty_database, _FETCH, params)["Plan"]

    # One probe a line (it finds the line and its first job) and the one
    # that finds no further line; a job's events for the lines below the
    # top class only (their wait may raise them); by id, the job taken
    # alone, to lock it and to take it.
    assert _index_searches(plan, "lgos_jobs_waiting") == 6 + 1
    assert _index_searches(plan, "procrastinate_events_job_id_fkey_v1") == 3
    assert _index_searches(plan, "procrastinate_jobs_pkey") == 2


async def test_a_take_passes_over_a_lines_first_job_that_may_not_be_taken(
    queue_backend, empty_database
):
    manager = queue_backend.jobs.app.job_manager
    worker = await manager.register_worker()
    await queue_backend.jobs.defer(
        [_job("holder", "x", Priority.INTERACTIVE, lock="L")]
    )
    holder = await manager.fetch_job(None, worker)
    await queue_backend.jobs.defer(
        [
            _job("locked", "a", Priority.BULK, lock="L"),  # its lock runs
            _job("later", "a", Priority.BULK, lock="S"),  # scheduled for later
            _job("free", "a", Priority.BULK, lock="F"),
        ]
    )
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute(
            "UPDATE procrastinate_jobs SET scheduled_at = now() + interval '1 hour' "
            "WHERE lock = 'S'"
        )

    taken = await manager.fetch_job(None, worker)
    none_left = await manager.fetch_job(None, worker)

    assert holder is not None
    assert taken is not None
    assert taken.task_kwargs["key"] == "free"
    assert none_left is None
