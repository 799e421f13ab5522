"""``/responses``: create (foreground or background), retrieve and cancel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from langgraph_openai_serve.background import executor as background
from langgraph_openai_serve.background.errors import ResponseNotFoundError
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.events import RunPaused
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.runner import run_graph, run_to_completion
from langgraph_openai_serve.openai.compact_json import json_response
from langgraph_openai_serve.openai.context import request_log
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.errors import SHUTDOWN_FAILURE
from langgraph_openai_serve.openai.request_body import openapi_body, parse_body
from langgraph_openai_serve.openai.responses.approvals import (
    InterruptRejected,
    rejected_body,
)
from langgraph_openai_serve.openai.responses.decode import ends_with_interrupt_answers
from langgraph_openai_serve.openai.responses.encode import (
    ResponseStreamEncoder,
    stream_frames,
)
from langgraph_openai_serve.openai.responses.interrupt_runs import releasing
from langgraph_openai_serve.openai.responses.pause import paused_items
from langgraph_openai_serve.openai.responses.runs import open_run
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import (
    BackgroundRuntime,
    ServeState,
    serve_state,
)

router = APIRouter()


@router.post(
    "/responses",
    response_model=None,
    openapi_extra=openapi_body(ResponseCreateRequest),
    responses=error_responses(400, 409, 413, 422, 504),
)
async def create_response(request: Request) -> Response:
    """Run the graph registered as ``body.model`` and return a Response.

    A background request may carry an ``Idempotency-Key`` header.
    """
    state = serve_state(request)
    body = await parse_body(request, ResponseCreateRequest, state.body_limits)
    config = state.registry.get_graph(body.model)
    interrupts = config.supports(GraphFeature.INTERRUPTS)
    resuming = body.previous_response_id is not None
    if resuming and not interrupts:
        raise InvalidRequestError(
            "previous_response_id only resumes a paused interrupt run; continue an "
            "ordinary conversation by replaying the previous output items.",
            param="previous_response_id",
        )
    if interrupts and not resuming and ends_with_interrupt_answers(body):
        raise InvalidRequestError(
            "Answers to a paused run must be sent with its previous_response_id.",
            param="previous_response_id",
        )
    log = request_log(request)
    if log is not None:
        log.model = body.model
    scope = await state.scope_for(request)
    if body.background:
        if not config.supports(GraphFeature.BACKGROUND):
            raise InvalidRequestError(
                f"Model '{body.model}' does not support background responses.",
                param="background",
            )
        idempotency_key = request.headers.get("idempotency-key")
        return await _submit_background(state, body, scope, idempotency_key)
    try:
        opened = await open_run(
            state, config, body, scope=scope, request_id=log.request_id if log else None
        )
    except InterruptRejected as rejection:
        if log is not None:
            log.stream_outcome = "rejected" if body.stream else None
        if body.stream:
            return EventStreamResponse(
                _rejected_frames(rejection), ping_interval=state.ping_interval
            )
        return json_response(rejected_body(rejection))
    lease = opened.lease
    try:
        if body.stream:
            events = run_graph(opened.run, stream=True, statuses=True)
            encoder = ResponseStreamEncoder(opened.shell, config.interrupt_protocol)
            frames = stream_frames(events, encoder, log, time_limit=state.run_timeout)
            if lease is not None:
                frames, lease = releasing(lease, frames), None
            return EventStreamResponse(
                frames,
                ping_interval=state.ping_interval,
                on_cut=partial(encoder.fail, SHUTDOWN_FAILURE),
            )
        completed, activity = await run_to_completion(
            opened.run, time_limit=state.run_timeout
        )
    finally:
        if lease is not None:
            await lease.release()
    if isinstance(completed, RunPaused):
        output = paused_items(completed, config.interrupt_protocol)
        return json_response(
            opened.shell.body("completed", output, usage=completed.usage)
        )
    return json_response(
        opened.shell.final_body(completed.answer, completed.usage, activity)
    )


async def _rejected_frames(rejection: InterruptRejected) -> AsyncIterator[bytes]:
    encoder = ResponseStreamEncoder(rejection.shell)
    yield encoder.start() + encoder.rejected(rejection)


async def _submit_background(
    state: ServeState,
    body: ResponseCreateRequest,
    scope: str,
    idempotency_key: str | None,
) -> Response:
    runtime = _runtime(state)
    snapshot = await background.submit(
        state,
        runtime,
        body,
        scope=scope,
        idempotency_key=background.check_idempotency_key(idempotency_key),
    )
    if body.stream:
        return EventStreamResponse(
            background.replay(runtime, snapshot["id"], -1),
            ping_interval=state.ping_interval,
        )
    return json_response(snapshot)


@router.get(
    "/responses/{response_id}", response_model=None, responses=error_responses(400)
)
async def retrieve_response(
    response_id: str,
    request: Request,
    stream: bool = False,
    starting_after: Annotated[int, Query(ge=-1)] = -1,
) -> Response:
    """The current snapshot of a background Response, or its event stream
    from ``starting_after`` (any API process can serve it)."""
    state = serve_state(request)
    runtime = _runtime(state, response_id)
    snapshot = await runtime.store.get(response_id, await state.scope_for(request))
    if snapshot is None:
        raise ResponseNotFoundError(response_id)
    if stream:
        return EventStreamResponse(
            background.replay(runtime, response_id, starting_after),
            ping_interval=state.ping_interval,
        )
    return json_response(snapshot)


@router.post(
    "/responses/{response_id}/cancel",
    response_model=None,
    responses=error_responses(),
)
async def cancel_response(response_id: str, request: Request) -> Response:
    """Cancel a background Response; cancelling a finished one changes nothing."""
    state = serve_state(request)
    runtime = _runtime(state, response_id)
    scope = await state.scope_for(request)
    if await runtime.store.get(response_id, scope) is None:
        raise ResponseNotFoundError(response_id)
    await background.cancel(runtime, response_id)
    snapshot = await runtime.store.get(response_id, scope)
    return json_response(snapshot)


def _runtime(state: ServeState, response_id: str | None = None) -> BackgroundRuntime:
    if state.background is None:
        if response_id is not None:
            raise ResponseNotFoundError(response_id)
        raise InvalidRequestError(
            "Background responses are not enabled.", param="background"
        )
    return state.background
