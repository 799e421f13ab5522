"""The lease and identity of an interrupt run, for one Responses request.

Under the coordinator lease the route reads the checkpoint, validates a
resume and runs the graph; the lease is taken before any response starts
(so a busy run is a plain 409) and released when the run's stream or
non-streaming call ends.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from langgraph_openai_serve.graph.checkpoint_keys import checkpoint_key
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.request import GraphRequest
from langgraph_openai_serve.openai.responses.interrupt_ids import (
    paused_response_id,
    run_id_from_metadata,
    run_id_from_response_id,
)


@dataclass(frozen=True, slots=True)
class InterruptRun:
    thread_id: str
    response_id: str
    lease: AbstractAsyncContextManager[None]
    run_id: uuid.UUID

    async def release(self) -> None:
        await self.lease.__aexit__(None, None, None)


async def open_interrupt_run(
    config: GraphConfig,
    scope: str,
    graph_request: GraphRequest,
    previous_response_id: str | None,
    run_id: uuid.UUID | None = None,
) -> InterruptRun:
    """Derive the run id and checkpoint key in ``scope``, take the lease.

    Raises:
        InvalidRequestError / PausedRunNotFoundError: a bad or foreign id.
        RunBusyError: another request holds the run's lease.
    """
    model = graph_request.model
    run_id = run_id or interrupt_run_id(
        scope, model, graph_request.metadata, previous_response_id
    )
    thread_id = checkpoint_key(scope, model, run_id)
    assert config.run_coordinator is not None  # registration guarantees it
    lease = config.run_coordinator.lease(thread_id)
    await lease.__aenter__()
    return InterruptRun(
        thread_id, paused_response_id(scope, model, run_id), lease, run_id
    )


def interrupt_run_id(
    scope: str,
    model: str,
    metadata: Mapping[str, str],
    previous_response_id: str | None,
) -> uuid.UUID:
    """The run a request addresses: the paused one it answers, or a new one
    (``metadata.lgos_run_id`` when a retry-safe request names it)."""
    if previous_response_id is not None:
        return run_id_from_response_id(previous_response_id, scope, model)
    return run_id_from_metadata(metadata)


async def releasing(
    run: InterruptRun, frames: AsyncIterator[bytes]
) -> AsyncIterator[bytes]:
    """Stream ``frames`` and release the run's lease when the stream ends."""
    try:
        async for frame in frames:
            yield frame
    finally:
        await run.release()
