"""A background Response's run as a task of the job queue.

One job per Response, named by its id: the job's ``lock`` is the Response
id, so two runs of one Response never overlap. A running job watches the
store's cancel flag and stops its run when a client asks (the queue knows
nothing of that flag); every other cancel is its worker stopping, and hands
the job back. A run that raised outside its graph (the store or the network
failed) runs again a second later; the attempts the store counts bound how
often a run may be lost with its worker (``execute.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from langgraph_openai_serve.jobs.protocol import Job, JobArgs, Priority, Task
from langgraph_openai_serve.jobs.retry import every
from langgraph_openai_serve.operations.outages import database_fault
from langgraph_openai_serve.responses.protocol import ResponseStore

TASK_NAME = "lgos.run_background_response"


def response_job(response_id: str, scope: str, *, first: bool = False) -> Job:
    """The job that runs ``response_id`` for the tenant ``scope``. A job
    queued again for it (an Idempotency-Key's retry) carries its id as
    queueing lock, so two such retries queue one; the ``first``, queued with
    its new Response, collides with nothing and goes without (and so without
    a savepoint inside the store's transaction)."""
    return Job(
        TASK_NAME,
        {"response_id": response_id},
        lock=response_id,
        queueing_lock=None if first else response_id,
        priority=Priority.INTERACTIVE,
        tenant=scope,
    )


def background_task(
    store: ResponseStore,
    execute: Callable[[str], Coroutine[Any, Any, None]],
    *,
    cancel_poll_interval: float,
) -> Task:
    """The task that runs queued Responses with ``execute``."""

    async def run(args: JobArgs, attempts: int) -> None:
        del attempts  # the store counts a Response's attempts itself
        response_id = args["response_id"]
        running = asyncio.create_task(execute(response_id))
        watcher = asyncio.create_task(
            _watch_cancel(store, response_id, running, cancel_poll_interval)
        )
        try:
            await running
        except asyncio.CancelledError:
            # Only the watcher's own cancel ends the job here. A watcher that
            # merely ended (it saw the run done, possibly before this task
            # resumed) says nothing: the worker is stopping, and the job must
            # go back to the queue, or its handed-back Response never runs.
            if not _cancelled_for_the_client(watcher):
                raise
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    return Task(TASK_NAME, run, every(1.0))


async def _watch_cancel(
    store: ResponseStore,
    response_id: str,
    run: asyncio.Task[None],
    interval: float,
) -> bool:
    """Cancel ``run`` once its client asks to; whether it did. The run
    itself reads the flag as it starts, so the first look is one interval
    later, not beside the run's own first statements."""
    while not run.done():
        await asyncio.sleep(interval)
        if not run.done() and await _cancel_asked(store, response_id):
            run.cancel()
            return True
    return False


async def _cancel_asked(store: ResponseStore, response_id: str) -> bool:
    """Whether the client asked to cancel; a database that is away has not
    been asked (the next look asks again)."""
    try:
        return await store.cancel_requested(response_id)
    except Exception as error:
        if database_fault(error) is None:
            raise
        return False


def _cancelled_for_the_client(watcher: asyncio.Task[bool]) -> bool:
    """The watcher ended by cancelling the run for its client."""
    return (
        watcher.done()
        and not watcher.cancelled()
        and watcher.exception() is None
        and watcher.result()
    )
