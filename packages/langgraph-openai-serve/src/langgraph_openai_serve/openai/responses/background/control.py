"""What a client does to a background Response while it runs: follow its
stream (from any API process) and cancel it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from langgraph_openai_serve.openai.responses.background.execute import end
from langgraph_openai_serve.openai.responses.background.task import TASK_NAME
from langgraph_openai_serve.openai.responses.sinks import event_frame
from langgraph_openai_serve.responses.protocol import TERMINAL_STATUSES
from langgraph_openai_serve.responses.runtime import BackgroundRuntime

CANCEL_WAIT_SECONDS = 2.0
"""How long a cancel waits for the running job to store its end."""
_CANCEL_LOOK_SECONDS = 0.02


async def cancel(runtime: BackgroundRuntime, response_id: str) -> None:
    """Flag, stop a running job, and wait briefly for its terminal snapshot.

    When no live worker will see the flag (the job was still waiting, or its
    worker is gone), the Response ends ``cancelled`` here and now.
    """
    store = runtime.store
    if not await store.request_cancel(response_id):
        return  # already terminal: cancel is idempotent
    nobody_runs_it = await runtime.jobs.cancel(TASK_NAME, response_id)
    job = await store.job(response_id)
    for _ in range(int(CANCEL_WAIT_SECONDS / _CANCEL_LOOK_SECONDS)):
        snapshot = await store.get(response_id, job.scope) if job else None
        if snapshot is None or snapshot.get("status") in TERMINAL_STATUSES:
            return
        if nobody_runs_it or snapshot.get("status") == "queued":
            assert job is not None
            await end(runtime, job, {**snapshot, "status": "cancelled"})
            return
        await asyncio.sleep(_CANCEL_LOOK_SECONDS)


async def replay(
    runtime: BackgroundRuntime, response_id: str, starting_after: int
) -> AsyncIterator[bytes]:
    """Stored stream events after ``starting_after``, then live ones."""
    async for stored in runtime.store.events(response_id, starting_after):
        yield event_frame(stored.event)
