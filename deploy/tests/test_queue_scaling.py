"""KEDA's query, run against the real procrastinate queue tables (set up by
the db-setup Job's own command) holding a mix of jobs in every state, put
there through the queue's own API the way API processes and workers do."""

from __future__ import annotations

import math
import uuid
from typing import Any

import psycopg
import pytest
from deploy_support import Rendered, container, plain_env
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.backends.postgres.queue import QUEUE, ProcrastinateQueue
from langgraph_openai_serve.batches.jobs import TASK_NAME as BATCH_STEP
from langgraph_openai_serve.jobs.protocol import Task
from langgraph_openai_serve.jobs.retry import every
from langgraph_openai_serve.openai.responses.background.task import (
    TASK_NAME,
    response_job,
)
from procrastinate.jobs import Status

pytestmark = pytest.mark.anyio


def _trigger(base: Rendered) -> dict[str, Any]:
    (trigger,) = base.get("ScaledObject", "lgos-worker")["spec"]["triggers"]
    metadata: dict[str, Any] = trigger["metadata"]
    return metadata


def _metric(url: str, query: str) -> float:
    with psycopg.connect(url) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return float(row[0])


async def _never(args: dict[str, Any], attempts: int) -> None:
    raise AssertionError("this test's jobs are fetched, never run")


@pytest.fixture
async def queue(set_up_database: str) -> Any:
    # Nothing runs the jobs here: the tasks are registered so that jobs of
    # them can be queued, as an API process queues them.
    backend = PostgresBackend(set_up_database)
    for name in (TASK_NAME, BATCH_STEP):
        backend.jobs.register(Task(name, _never, every(1.0)))
    with psycopg.connect(set_up_database, autocommit=True) as conn:
        conn.execute("DELETE FROM procrastinate_jobs")
    yield backend.jobs
    with psycopg.connect(set_up_database, autocommit=True) as conn:
        conn.execute("DELETE FROM procrastinate_jobs")
    await backend.close()


async def test_the_query_counts_ready_and_running_jobs_of_the_worker_queue(
    base: Rendered, set_up_database: str, queue: ProcrastinateQueue
) -> None:
    manager = queue.app.job_manager
    ready = [f"resp_{uuid.uuid4().hex}" for _ in range(12)]
    for response_id in ready:
        await queue.defer([response_job(response_id, "default")])
    worker_id = await manager.register_worker()
    running = [await manager.fetch_job([QUEUE], worker_id) for _ in range(5)]
    succeeded, failed = running[0], running[1]
    assert succeeded is not None
    assert failed is not None
    # Two of the fetched jobs end: succeeded and failed (kept, not deleted).
    await manager.finish_job(succeeded, Status.SUCCEEDED, delete_job=False)
    await manager.finish_job(failed, Status.FAILED, delete_job=False)
    # One waiting job is cancelled by its client.
    waiting = list(await manager.list_jobs_async(queue=QUEUE, status="todo"))
    assert waiting[0].id is not None
    assert await manager.cancel_job_by_id_async(waiting[0].id)
    # A Batch API step is a job of the same queue: a worker runs it too.
    await queue.app.configure_task(BATCH_STEP, queue=QUEUE).defer_async(
        kind="chunk", batch_id="batch_deploy_test", chunk=0
    )
    # A retry due in an hour, and jobs of another queue, need no worker now.
    await queue.app.configure_task(
        TASK_NAME, lock="later", schedule_in={"hours": 1}
    ).defer_async(response_id="resp_later")
    for n in range(2):
        await queue.app.configure_task(TASK_NAME, queue="someone_else").defer_async(
            response_id=f"resp_other_{n}"
        )

    trigger = _trigger(base)
    jobs = _metric(set_up_database, trigger["query"])

    # 3 running (5 fetched, 2 ended) + 6 ready (12 - 5 fetched - 1
    # cancelled) + the batch step.
    assert jobs == 10
    target = float(trigger["targetQueryValue"])
    # KEDA's HPA: ceil(metric / target) workers; 10 jobs at 8 per worker.
    assert math.ceil(jobs / target) == 2


async def test_running_jobs_alone_keep_their_workers(
    base: Rendered, set_up_database: str, queue: ProcrastinateQueue
) -> None:
    # The scale-down hole this query closes: nothing waits, 17 jobs run on
    # three workers. A query of waiting jobs only would say 0 workers.
    manager = queue.app.job_manager
    for _ in range(17):
        await queue.defer([response_job(f"resp_{uuid.uuid4().hex}", "default")])
    worker_id = await manager.register_worker()
    for _ in range(17):
        assert await manager.fetch_job([QUEUE], worker_id) is not None

    trigger = _trigger(base)
    jobs = _metric(set_up_database, trigger["query"])

    assert jobs == 17
    assert math.ceil(jobs / float(trigger["targetQueryValue"])) == 3


def test_the_query_reads_the_queue_the_worker_drains(base: Rendered) -> None:
    # The worker's concurrency is KEDA's per-worker target (test_rules), and
    # the query names the queue `lgos worker` takes jobs from.
    query = _trigger(base)["query"]
    worker = container(base.get("Deployment", "lgos-worker"), "worker")

    assert f"queue_name = '{QUEUE}'" in query
    assert (
        plain_env(base, worker)["LGOS_BACKGROUND_CONCURRENCY"]
        == (_trigger(base)["targetQueryValue"])
    )


def test_a_poll_reads_only_the_running_and_scheduled_jobs(
    base: Rendered, set_up_database: str
) -> None:
    # The waiting jobs are counted from the counts the database keeps; a
    # poll reading procrastinate's table through an index of every job of
    # the queue (or the whole table) grows with the queue and its history.
    # With sequential scans off, the planner takes any index that serves a
    # read: each read of the table must go through a partial index (the
    # running jobs, the jobs scheduled or put back).
    query = _trigger(base)["query"]
    with psycopg.connect(set_up_database) as conn:
        conn.execute("SET enable_seqscan = off")
        (plan,) = conn.execute(f"EXPLAIN (FORMAT JSON) {query}").fetchone() or (None,)
        indexes: dict[str, bool] = dict(
            conn.execute(
                "SELECT indexrelid::regclass::text, indpred IS NOT NULL "
                "FROM pg_index WHERE indrelid = 'procrastinate_jobs'::regclass"
            ).fetchall()
        )
    nodes = _nodes(plan[0]["Plan"])
    read_through = [
        node["Index Name"] for node in nodes if node.get("Index Name") in indexes
    ]

    assert not [
        node
        for node in nodes
        if node["Node Type"] == "Seq Scan"
        and node.get("Relation Name") == "procrastinate_jobs"
    ]
    assert read_through, "the running and the scheduled jobs are read"
    assert all(indexes[name] for name in read_through), read_through


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    found = [node]
    for child in node.get("Plans", ()):
        found.extend(_nodes(child))
    return found
