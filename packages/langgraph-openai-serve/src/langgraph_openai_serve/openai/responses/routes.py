"""``POST /responses``: create a Response, in the foreground or background.

Retrieve, cancel, delete and ``input_items`` are in ``stored.py``. With a
response store, a finished Response is kept after it is built (a stream's
before its terminal event goes out), ``previous_response_id`` continues a
kept one (``chain.py``) and ``conversation`` runs after a Conversation's
items and adds to them (``conversation.py``); without one, nothing here
touches a store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

from fastapi import APIRouter, Request
from starlette.responses import Response

from langgraph_openai_serve.background import executor as background
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
from langgraph_openai_serve.openai.responses.chain import continued_request
from langgraph_openai_serve.openai.responses.conversation import (
    conversation_request,
    settler,
    with_paused_conversation,
)
from langgraph_openai_serve.openai.responses.decode import ends_with_interrupt_answers
from langgraph_openai_serve.openai.responses.encode import (
    ResponseStreamEncoder,
    stream_frames,
)
from langgraph_openai_serve.openai.responses.input_items import input_items_of
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
    store = state.responses
    if body.store and store is None:
        raise InvalidRequestError(
            "This server does not keep responses; omit 'store' or set it to false.",
            param="store",
        )
    config = state.registry.get_graph(body.model)
    interrupts = config.supports(GraphFeature.INTERRUPTS)
    resuming = body.previous_response_id is not None
    if resuming and not interrupts and store is None and body.conversation is None:
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
    kept = store is not None and body.store is not False
    run_body = body
    if body.conversation is not None:
        run_body = await conversation_request(state.conversations, body, scope)
    elif resuming and store is not None:
        continuation = await continued_request(
            store, body, scope, interrupts=interrupts
        )
        run_body = continuation.run_body
        if continuation.paused is not None and state.conversations is not None:
            body = run_body = with_paused_conversation(body, continuation.paused)
    continues = body.previous_response_id if run_body is not body else None
    if body.background:
        if not config.supports(GraphFeature.BACKGROUND):
            raise InvalidRequestError(
                f"Model '{body.model}' does not support background responses.",
                param="background",
            )
        if store is not None and not kept:
            raise InvalidRequestError(
                "A background response is kept until it expires; omit 'store' or "
                "set it to true.",
                param="store",
            )
        idempotency_key = request.headers.get("idempotency-key")
        return await _submit_background(
            state, body, run_body, scope, idempotency_key, continues
        )
    keep = settler(store if kept else None, state.conversations, scope, body)
    try:
        opened = await open_run(
            state,
            config,
            run_body,
            scope=scope,
            request_id=log.request_id if log else None,
            kept=kept,
            continues=continues,
        )
    except InterruptRejected as rejection:
        if log is not None:
            log.stream_outcome = "rejected" if body.stream else None
        if keep is not None:
            await keep(rejected_body(rejection))
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
            frames = stream_frames(
                events, encoder, log, time_limit=state.run_timeout, keep=keep
            )
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
        result = opened.shell.body("completed", output, usage=completed.usage)
    else:
        result = opened.shell.final_body(completed.answer, completed.usage, activity)
    if keep is not None:
        await keep(result)
    return json_response(result)


async def _rejected_frames(rejection: InterruptRejected) -> AsyncIterator[bytes]:
    encoder = ResponseStreamEncoder(rejection.shell)
    yield encoder.start() + encoder.rejected(rejection)


async def _submit_background(
    state: ServeState,
    body: ResponseCreateRequest,
    run_body: ResponseCreateRequest,
    scope: str,
    idempotency_key: str | None,
    continues: str | None,
) -> Response:
    runtime = _runtime(state)
    snapshot = await background.submit(
        state,
        runtime,
        run_body,
        scope=scope,
        idempotency_key=background.check_idempotency_key(idempotency_key),
        input_items=input_items_of(body) if state.responses is not None else None,
        continues=continues,
    )
    if body.stream:
        return EventStreamResponse(
            background.replay(runtime, snapshot["id"], -1),
            ping_interval=state.ping_interval,
            ends_with=state.lifecycle,
        )
    return json_response(snapshot)


def _runtime(state: ServeState) -> BackgroundRuntime:
    if state.background is None:
        raise InvalidRequestError(
            "Background responses are not enabled.", param="background"
        )
    return state.background
