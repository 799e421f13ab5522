"""Background Responses: submit, execute in a worker, retrieve, cancel.

The executor runs a stored job exactly like a foreground streaming request
(the same ``open_run`` and encoder) and records every stream event, so a
client can poll the snapshot or replay the stream from any sequence number.
A run that raises ends ``failed``; a cancelled one ends ``cancelled``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from langgraph_openai_serve.background.protocol import (
    TERMINAL_STATUSES,
    BackgroundJob,
    Executor,
)
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.runner import run_graph
from langgraph_openai_serve.openai.errors import INTERNAL_ERROR_MESSAGE
from langgraph_openai_serve.openai.responses.encode import (
    ResponseStreamEncoder,
    stream_frames,
)
from langgraph_openai_serve.openai.responses.interrupt_ids import paused_response_id
from langgraph_openai_serve.openai.responses.interrupt_runs import interrupt_run_id
from langgraph_openai_serve.openai.responses.items import ResponseShell, new_id
from langgraph_openai_serve.openai.responses.runs import decode, open_run
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import BackgroundRuntime, ServeState

logger = logging.getLogger("langgraph_openai_serve")

_TERMINAL_EVENTS = (
    b"event: response.completed\n",
    b"event: response.incomplete\n",
    b"event: response.failed\n",
)


def check_idempotency_key(value: str | None) -> str | None:
    if value is not None and not 1 <= len(value) <= 255:
        raise InvalidRequestError(
            "Idempotency-Key must be 1 to 255 characters.", param="Idempotency-Key"
        )
    return value


def body_digest(body: ResponseCreateRequest) -> str:
    canonical = json.dumps(
        body.model_dump(mode="json", exclude_unset=True, by_alias=True),
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


async def submit(
    state: ServeState,
    runtime: BackgroundRuntime,
    body: ResponseCreateRequest,
    *,
    scope: str,
    idempotency_key: str | None,
) -> dict[str, Any]:
    """Validate, store the queued Response and hand the job to the backend."""
    config = state.registry.get_graph(body.model)
    graph_request, _, _ = decode(body, config)  # reject bad input before queueing
    response_id, run_id = new_id("resp"), None
    if config.supports(GraphFeature.INTERRUPTS):
        # The run is chosen now, so the Response id can name it for resumes.
        run = interrupt_run_id(scope, graph_request, body.previous_response_id)
        response_id, run_id = paused_response_id(scope, body.model, run), run.hex
    job = BackgroundJob(
        response_id=response_id,
        scope=scope,
        body=body.model_dump(mode="json", exclude_unset=True, by_alias=True),
        run_id=run_id,
    )
    shell = ResponseShell.for_request(body, response_id=response_id, background=True)
    snapshot, created = await runtime.store.create(
        job,
        shell.body("queued", []),
        idempotency_key=idempotency_key,
        body_digest=body_digest(body) if idempotency_key else None,
    )
    if created:
        await runtime.ensure_started(executor_for(state, runtime))
        await runtime.backend.submit(job)
    return snapshot


def executor_for(state: ServeState, runtime: BackgroundRuntime) -> Executor:
    """What the backend calls to run one queued job of this server."""

    async def execute(job: BackgroundJob) -> None:
        await _execute(state, runtime, job)

    return execute


async def _execute(
    state: ServeState, runtime: BackgroundRuntime, job: BackgroundJob
) -> None:
    store = runtime.store
    body = ResponseCreateRequest.model_validate(job.body)
    shell = ResponseShell.for_request(
        body, response_id=job.response_id, background=True
    )
    if await store.cancel_requested(job.response_id):
        await store.set_snapshot(job.response_id, shell.body("cancelled", []))
        return
    encoder = ResponseStreamEncoder(shell)
    terminal: dict[str, Any] | None = None
    try:
        await store.set_snapshot(job.response_id, shell.body("in_progress", []))
        config = state.registry.get_graph(body.model)
        encoder.interrupt_protocol = config.interrupt_protocol
        opened = await open_run(
            state,
            config,
            body,
            scope=job.scope,
            response_id=job.response_id,
            run_id=uuid.UUID(hex=job.run_id) if job.run_id else None,
        )
        try:
            events = run_graph(opened.run, stream=True, statuses=True)
            async for frame in stream_frames(events, encoder):
                parts = _split_events(frame)
                await store.append_events(job.response_id, parts)
                for part in parts:
                    if part.startswith(_TERMINAL_EVENTS):
                        terminal = _response_of(part)
        finally:
            if opened.lease is not None:
                await opened.lease.release()
    except asyncio.CancelledError:
        await asyncio.shield(
            store.set_snapshot(job.response_id, shell.body("cancelled", encoder.output))
        )
        raise
    except Exception as exc:
        logger.exception("background.run_failed response=%s", job.response_id)
        message = (
            str(exc) if isinstance(exc, InvalidRequestError) else INTERNAL_ERROR_MESSAGE
        )
        terminal = shell.body(
            "failed", encoder.output, error={"code": "server_error", "message": message}
        )
    if terminal is None:  # pragma: no cover - the encoder always ends a stream
        terminal = shell.body("failed", encoder.output, error=_server_error())
    await store.set_snapshot(job.response_id, terminal)


def _server_error() -> dict[str, str]:
    return {"code": "server_error", "message": INTERNAL_ERROR_MESSAGE}


def _split_events(frame: bytes) -> list[bytes]:
    return [part + b"\n\n" for part in frame.split(b"\n\n") if part]


def _response_of(event: bytes) -> dict[str, Any]:
    data = next(line for line in event.split(b"\n") if line.startswith(b"data: "))
    response: dict[str, Any] = json.loads(data[6:])["response"]
    return response


async def cancel(runtime: BackgroundRuntime, response_id: str) -> None:
    """Flag, stop a running job, and wait briefly for its terminal snapshot."""
    if not await runtime.store.request_cancel(response_id):
        return  # already terminal: cancel is idempotent
    await runtime.backend.cancel(response_id)
    job = await runtime.store.job(response_id)
    for _ in range(100):
        snapshot = await runtime.store.get(response_id, job.scope) if job else None
        if snapshot is None or snapshot.get("status") in TERMINAL_STATUSES:
            return
        if snapshot.get("status") == "queued":
            await runtime.store.set_snapshot(
                response_id, {**snapshot, "status": "cancelled"}
            )
            return
        await asyncio.sleep(0.02)


async def replay(
    runtime: BackgroundRuntime, response_id: str, starting_after: int
) -> AsyncIterator[bytes]:
    """Stored stream events after ``starting_after``, then live ones."""
    async for event in runtime.store.events(response_id, starting_after):
        yield event.frame
