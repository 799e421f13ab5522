"""A worker that stops while a run is going hands the run back to the queue:
its job must end in procrastinate's retry, never as a success, or the
Response stays ``queued`` with no job and never ends.

The job's task runs the executor beside a watcher of the client's cancel
flag. On a stop procrastinate cancels the task; the run hands itself back
and ends cancelled, and the watcher, seeing the run done, ends too. When the
watcher ends before the task resumes (one loop turn: rare at a 0.25 s poll,
certain at 0), the stop must still be reported as a stop.
"""

from __future__ import annotations

import asyncio

import pytest
from langgraph_openai_serve.background.memory import InMemoryResponseStore
from langgraph_openai_serve.background.postgres.queue import (
    TASK_NAME,
    ProcrastinateBackend,
)
from langgraph_openai_serve.background.protocol import BackgroundJob

pytestmark = pytest.mark.anyio

RESPONSE = "resp_stopped"


@pytest.fixture
async def backend(postgres_uri):
    backend = ProcrastinateBackend(
        postgres_uri, InMemoryResponseStore(), cancel_poll_interval=0
    )
    yield backend
    await backend.stop()


async def _running_job(backend: ProcrastinateBackend) -> asyncio.Task[None]:
    """The job's task for a running Response, driven here as procrastinate's
    worker drives it."""
    store = backend.store
    job = BackgroundJob(response_id=RESPONSE, scope="s", body={})
    await store.create(job, {"id": RESPONSE, "status": "in_progress"})
    started = asyncio.Event()

    async def execute(response_id: str) -> None:
        started.set()
        try:
            await asyncio.Future()  # runs until stopped
        except asyncio.CancelledError:
            await store.hand_back(response_id)
            await asyncio.sleep(0)  # the hand-back's round trip
            raise

    await backend.start(execute)
    task = asyncio.create_task(backend.app.tasks[TASK_NAME](response_id=RESPONSE))
    await started.wait()
    return task


async def test_a_stopped_worker_reports_the_stop_even_when_the_watcher_ends_first(
    backend,
):
    task = await _running_job(backend)

    task.cancel()  # the worker stops: procrastinate cancels the job's task

    # Reported as a stop, so procrastinate's retry puts the job back.
    with pytest.raises(asyncio.CancelledError):
        await task
    snapshot = await backend.store.get(RESPONSE, "s")
    assert snapshot is not None
    assert snapshot["status"] == "queued"


async def test_a_client_cancel_ends_the_job_without_a_retry(backend):
    task = await _running_job(backend)

    await backend.store.request_cancel(RESPONSE)

    await task  # ends normally: the run was cancelled for good, no retry
    assert task.done()
    assert not task.cancelled()
