"""A job's end is recorded though the database broke the statement that
records it: procrastinate's worker would leave the job ``doing`` under a
live worker, run by nobody, until that worker died. A real PostgreSQL of
this module's own (``lgos_testkit.postgres``) refuses connections while a
job ends; once it takes them again the job is finished, not stranded."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import psycopg
import pytest
from backend_fixtures import jobs_running
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.jobs.protocol import Job, JobArgs, Task
from langgraph_openai_serve.jobs.retry import every
from lgos_testkit import async_wait_until
from lgos_testkit.postgres import FaultyPostgres

pytestmark = pytest.mark.anyio

PROMPT = 60.0
TASK = "lgos.test_outlasting_job"


@pytest.fixture
async def backend(faulty_database: FaultyPostgres) -> AsyncIterator[PostgresBackend]:
    built = PostgresBackend(faulty_database.url, timeout=1.0, queue_wait=1.0)
    yield built
    await built.close()


def _jobs_of(database: FaultyPostgres) -> list[str]:
    with psycopg.connect(database.url) as conn:
        rows = conn.execute(
            "SELECT status::text FROM procrastinate_jobs WHERE task_name = %s",
            (TASK,),
        ).fetchall()
    return [row[0] for row in rows]


async def test_a_job_that_ends_while_the_database_refuses_is_finished_once_it_is_back(
    backend, faulty_database, caplog
):
    caplog.set_level(logging.WARNING, logger="langgraph_openai_serve")
    started, release = asyncio.Event(), asyncio.Event()

    async def held(args: JobArgs, attempts: int) -> None:
        started.set()
        await release.wait()

    backend.jobs.register(Task(TASK, held, every(0.0)))

    async def end_waits() -> bool:
        return any("background.job_end_waits" in r.message for r in caplog.records)

    async def finished() -> bool:
        return _jobs_of(faulty_database) == []  # a succeeded job is deleted

    async with jobs_running(backend, concurrency=1, shutdown_timeout=30.0):
        await backend.jobs.defer([Job(TASK, {})])
        await asyncio.wait_for(started.wait(), PROMPT)
        with faulty_database.refusing():
            release.set()  # the job ends; recording it meets the refusal
            await async_wait_until(end_waits, PROMPT, "the job's end to wait")
        await async_wait_until(finished, PROMPT, "the job to be finished")
