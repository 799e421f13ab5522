"""A worker that stops while a run is going hands the run back to the queue:
its job must end in procrastinate's retry, never as a success, or the
Response stays ``queued`` with no job and never ends.

The job's task (``openai/responses/background/task.py``) runs the executor
beside a watcher of the client's cancel flag. On a stop the queue's worker
cancels the task; the run hands itself back
and ends cancelled, and the watcher, seeing the run done, ends too. When the
watcher ends before the task resumes (one loop turn: rare at a 0.25 s poll,
certain at 0), the stop must still be reported as a stop.
"""

from __future__ import annotations

import asyncio

import pytest
from langgraph_openai_serve.backends.memory.responses import InMemoryResponseStore
from langgraph_openai_serve.openai.responses.background.task import background_task
from langgraph_openai_serve.responses.protocol import BackgroundJob

pytestmark = pytest.mark.anyio

RESPONSE = "resp_stopped"


@pytest.fixture
def store() -> InMemoryResponseStore:
    return InMemoryResponseStore()


async def _running_job(store: InMemoryResponseStore) -> asyncio.Task[None]:
    """The job's task for a running Response, driven here as a queue's
    worker drives it."""
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

    task = background_task(store, execute, cancel_poll_interval=0)
    running = asyncio.create_task(task.run({"response_id": RESPONSE}, 0))
    await started.wait()
    return running


async def test_a_stopped_worker_reports_the_stop_even_when_the_watcher_ends_first(
    store,
):
    task = await _running_job(store)

    task.cancel()  # the worker stops: it cancels the job's task

    # Reported as a stop, so the queue's retry puts the job back.
    with pytest.raises(asyncio.CancelledError):
        await task
    snapshot = await store.get(RESPONSE, "s")
    assert snapshot is not None
    assert snapshot["status"] == "queued"


async def test_a_client_cancel_ends_the_job_without_a_retry(store):
    task = await _running_job(store)

    await store.request_cancel(RESPONSE)

    await task  # ends normally: the run was cancelled for good, no retry
    assert task.done()
    assert not task.cancelled()
