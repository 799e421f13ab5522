"""A worker's take and the queue's statistics on PostgreSQL stay cheap as
the queue grows (issue 48), and the statistics stay exact.

The waiting jobs are counted by the database as they come and go
(``backends/postgres/queue_counts.py``): the counts must match the queue
table through every way a job arrives, leaves or changes, before and after
they are folded, and on a database set up before the counts existed. How
much a scrape and a take read is checked in buffers and index probes
(``EXPLAIN (ANALYZE, BUFFERS)``), which do not depend on the machine.
"""

from __future__ import annotations

import datetime as dt
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
from langgraph_openai_serve.backends.postgres.queue_counts import FOLD_AFTER
from langgraph_openai_serve.backends.postgres.queue_stats import QUEUE_STATS
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import Job, Priority, Task

pytestmark = pytest.mark.anyio

TASK = "lgos.counted_task"

_EXACT = f"""
SELECT coalesce(args->>'lgos_tenant', '') AS tenant, priority, count(*) AS jobs
  FROM procrastinate_jobs
 WHERE status = 'todo' AND queue_name = '{QUEUE}'
   AND (scheduled_at IS NULL OR scheduled_at <= now())
 GROUP BY 1, 2
"""
"""The ready jobs per (tenant, priority), counted on the queue table."""


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


async def _ready_by_line(backend: PostgresBackend) -> dict[tuple[str, int], int]:
    stats = await backend.jobs.stats()
    counts = {
        (count.tenant, count.work): count.ready for count in stats.work if count.ready
    }
    assert all(type(ready) is int for ready in counts.values())
    return counts


def _exact_by_line(uri: str) -> dict[tuple[str, int], int]:
    from langgraph_openai_serve.jobs.protocol import work_kind

    with psycopg.connect(uri) as conn:
        rows = conn.execute(_EXACT).fetchall()
    return {(tenant, work_kind(priority)): jobs for tenant, priority, jobs in rows}


async def test_ready_counts_match_the_queue_through_every_change_and_fold(
    queue_backend, empty_database
):
    backend = queue_backend
    manager = backend.jobs.app.job_manager
    worker = await manager.register_worker()
    # Queued one by one and many in one statement, for three lines.
    await backend.jobs.defer([_job("a1", "a", Priority.BULK, lock="La1")])
    await backend.jobs.defer(
        [_job(f"a{n}", "a", Priority.BULK, lock=f"La{n}") for n in range(2, 6)]
        + [_job(f"b{n}", "b", Priority.INTERACTIVE) for n in range(3)]
        + [_job("own", None, Priority.STEP)]
    )
    # Taken, put back, dropped, finished, scheduled for later, moved.
    taken = [await manager.fetch_job(None, worker) for _ in range(3)]
    assert all(job is not None for job in taken)
    await manager.retry_job_by_id_async(taken[0].id, retry_at=dt.datetime.now(dt.UTC))
    await manager.finish_job_by_id_async(taken[1].id, _succeeded(), delete_job=True)
    assert await backend.jobs.cancel(TASK, "La5") is True
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute(
            "UPDATE procrastinate_jobs SET scheduled_at = now() + interval '1 hour' "
            "WHERE lock = 'La4'"
        )
        conn.execute(
            "UPDATE procrastinate_jobs SET priority = %s WHERE lock = 'La3'",
            (int(Priority.INTERACTIVE),),
        )

    before_fold = await _ready_by_line(backend)
    assert before_fold == _exact_by_line(empty_database)

    # Enough changes for a read to fold them; the counts hold after it.
    for n in range(FOLD_AFTER + 1):
        await backend.jobs.defer([_job(f"c{n}", "c", Priority.STEP)])
    await backend.jobs.stats()  # folds
    with psycopg.connect(empty_database) as conn:
        (changes,) = conn.execute(
            "SELECT count(*) FROM lgos_queue_waiting_changes"
        ).fetchone()
    after_fold = await _ready_by_line(backend)

    assert changes < FOLD_AFTER
    assert after_fold == _exact_by_line(empty_database)
    assert after_fold[("c", "step")] == FOLD_AFTER + 1


def _noted_changes(uri: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM lgos_queue_waiting_changes").fetchone()
    assert row is not None
    return int(row[0])


async def test_a_workers_sweep_folds_the_noted_changes_where_nothing_scrapes(
    queue_backend, empty_database
):
    # Metrics off, or no Prometheus: no scrape folds the changes, which
    # would grow by a row a queued, taken or finished job.
    for n in range(FOLD_AFTER + 1):
        await queue_backend.jobs.defer([_job(f"s{n}", "s", Priority.STEP)])
    assert _noted_changes(empty_database) > FOLD_AFTER

    await queue_backend.jobs.retry_stalled_jobs()

    assert _noted_changes(empty_database) == 0
    assert await _ready_by_line(queue_backend) == {("s", "step"): FOLD_AFTER + 1}


def _succeeded() -> Any:
    from procrastinate.jobs import Status

    return Status.SUCCEEDED


async def test_setup_counts_the_jobs_that_waited_before_the_counts_existed(
    queue_backend, empty_database
):
    # A database set up by an LGOS without the counts: jobs wait, no
    # trigger notes them.
    with psycopg.connect(empty_database, autocommit=True) as conn:
        for name in (
            "insert",
            "update",
            "delete",
            "truncate",
        ):
            conn.execute(
                f"DROP TRIGGER lgos_note_waiting_jobs_{name} ON procrastinate_jobs"
            )
        conn.execute("DROP TABLE lgos_queue_waiting_counts, lgos_queue_waiting_changes")
    await queue_backend.jobs.defer(
        [_job(f"w{n}", "w", Priority.BULK) for n in range(4)]
    )

    await queue_backend.setup()
    await queue_backend.setup()  # again: nothing counted twice
    await queue_backend.jobs.defer([_job("after", "w", Priority.BULK)])

    assert await _ready_by_line(queue_backend) == {("w", "bulk"): 5}


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


async def test_a_scrape_reads_no_more_of_a_long_queue_than_of_a_short_one(
    queue_backend, empty_database
):
    _queue_lines(empty_database, jobs_per_line=2, tenants=3)
    await queue_backend.jobs.stats()
    short = _buffers(empty_database, QUEUE_STATS)["Plan"]["Shared Hit Blocks"]

    _queue_lines(empty_database, jobs_per_line=3000, tenants=3)  # 18,000 more
    await queue_backend.jobs.stats()
    long = _buffers(empty_database, QUEUE_STATS)["Plan"]["Shared Hit Blocks"]

    # A probe a line may go one B-tree level deeper; no job is counted.
    assert long <= short + 3 * 6


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
