"""``POST /responses``: create a Response, in the foreground or background.

Retrieve, cancel, delete and ``input_items`` are in ``stored.py``. With a
response store, a finished Response is kept after it is built (a stream's
before its terminal event goes out), ``previous_response_id`` continues a
kept one (``chain.py``) and ``conversation`` runs after a Conversation's
items and adds to them (``conversation.py``), one turn at a time; without
one, nothing here touches a store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

from fastapi import APIRouter, Request
from starlette.responses import Response

from langgraph_openai_serve.background import executor as background
from langgraph_openai_serve.conversations.turns import ConversationTurn
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.events import RunPaused
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.runner import run_graph, run_to_completion
from langgraph_openai_serve.openai.compact_json import json_response
from langgraph_openai_serve.openai.context import RequestLog, request_log
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.request_body import openapi_body, parse_body
from langgraph_openai_serve.openai.responses.approvals import (
    InterruptRejected,
    rejected_body,
)
from langgraph_openai_serve.openai.responses.chain import continued_request
from langgraph_openai_serve.openai.responses.conversation import (
    conversation_request,
    paused_conversation_turn,
    settler,
)
from langgraph_openai_serve.openai.responses.decode import ends_with_interrupt_answers
from langgraph_openai_serve.openai.responses.encode import (
    ResponseStreamEncoder,
    stream_frames,
)
from langgraph_openai_serve.openai.responses.input_items import input_items_of
from langgraph_openai_serve.openai.responses.interrupt_runs import releasing
from langgraph_openai_serve.openai.responses.items import new_id
from langgraph_openai_serve.openai.responses.pause import paused_items
from langgraph_openai_serve.openai.responses.runs import open_run
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import (
    BackgroundRuntime,
    ServeState,
    serve_state,
)
from langgraph_openai_serve.openai.stream_failure import SHUTDOWN_FAILURE

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
    if body.background:
        _check_background(state, config, body)
    log = request_log(request)
    if log is not None:
        log.model = body.model
    scope = await state.scope_for(request)
    lease = state.conversation_lease
    run_body = body
    turn: ConversationTurn | None = None
    # A background Response's id is chosen before a Conversation is claimed:
    # the claim is made in its name, and held while it is queued and run.
    if body.conversation is not None:
        reservation = _reserve(state, body, scope)
        run_body, turn = await conversation_request(
            state.conversations, body, scope, _holder(reservation), lease=lease
        )
    elif resuming and store is not None:
        continuation = await continued_request(
            store, body, scope, interrupts=interrupts
        )
        run_body = continuation.run_body
        reservation = _reserve(state, run_body, scope)
        if continuation.paused is not None and state.conversations is not None:
            body, turn = await paused_conversation_turn(
                state.conversations,
                body,
                continuation.paused,
                scope,
                _holder(reservation),
                lease=lease,
            )
            run_body = body
    else:
        reservation = _reserve(state, body, scope)
    try:
        if reservation is not None:
            return await _submit_background(
                state, request, body, run_body, scope, reservation, turn
            )
        if turn is not None and not body.stream:
            turn.keep_alive()  # a stream's turn renews from its first frame
        return await _run_foreground(state, config, body, run_body, scope, log, turn)
    except BaseException:
        if turn is not None:
            await turn.end()  # nothing happened (a turn added ends itself)
        raise


def _reserve(
    state: ServeState, body: ResponseCreateRequest, scope: str
) -> background.Reservation | None:
    """The ids of the background Response ``body`` creates; ``None`` for a
    foreground one."""
    return background.reserve(state, body, scope) if body.background else None


def _holder(reservation: background.Reservation | None) -> str:
    """Who claims a Conversation: a background Response, or a foreground
    turn's own token."""
    return reservation.response_id if reservation else new_id("turn")


def _check_background(
    state: ServeState, config: GraphConfig, body: ResponseCreateRequest
) -> None:
    if not config.supports(GraphFeature.BACKGROUND):
        raise InvalidRequestError(
            f"Model '{body.model}' does not support background responses.",
            param="background",
        )
    if state.responses is not None and body.store is False:
        raise InvalidRequestError(
            "A background response is kept until it expires; omit 'store' or "
            "set it to true.",
            param="store",
        )


async def _run_foreground(
    state: ServeState,
    config: GraphConfig,
    body: ResponseCreateRequest,
    run_body: ResponseCreateRequest,
    scope: str,
    log: RequestLog | None,
    turn: ConversationTurn | None,
) -> Response:
    """Run the graph for ``run_body`` and answer, streamed or not; a turn's
    claim ends once its Response is kept (or the stream ends without one)."""
    store = state.responses
    kept = store is not None and body.store is not False
    continues = body.previous_response_id if run_body is not body else None
    keep = settler(store if kept else None, scope, body, turn)
    watch = state.observer.run(
        body.model,
        "responses",
        requested=log.started if log is not None and body.stream else None,
        conversation=body.conversation_id,
    )
    try:
        opened = await open_run(
            state,
            config,
            run_body,
            scope=scope,
            request_id=log.request_id if log else None,
            kept=kept,
            continues=continues,
            callbacks=watch.callbacks,
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
    watch.name_response(opened.shell.id)
    try:
        if body.stream:
            events = run_graph(opened.run, stream=True, statuses=True)
            encoder = ResponseStreamEncoder(opened.shell, config.interrupt_protocol)
            frames = stream_frames(
                events,
                encoder,
                log,
                time_limit=state.run_timeout,
                keep=keep,
                watch=watch,
            )
            if lease is not None:
                frames, lease = releasing(lease, frames), None
            if turn is not None:
                frames = ending(turn, frames)
            return EventStreamResponse(
                frames,
                ping_interval=state.ping_interval,
                on_cut=partial(encoder.fail, SHUTDOWN_FAILURE),
                active=state.observer.stream_gauge("responses"),
            )
        completed, activity = await run_to_completion(
            opened.run, time_limit=state.run_timeout, watch=watch
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


async def ending(
    turn: ConversationTurn, frames: AsyncIterator[bytes]
) -> AsyncIterator[bytes]:
    """Stream ``frames`` and renew the turn's claim while they flow; a turn
    whose stream ends before its Response was kept (the client left, the
    server stopped) gives its claim up. A stream never started (the client
    left before the headers went out) renews nothing: its claim lapses."""
    turn.keep_alive()
    try:
        async for frame in frames:
            yield frame
    finally:
        await turn.end()


async def _rejected_frames(rejection: InterruptRejected) -> AsyncIterator[bytes]:
    encoder = ResponseStreamEncoder(rejection.shell)
    yield encoder.start() + encoder.rejected(rejection)


async def _submit_background(
    state: ServeState,
    request: Request,
    body: ResponseCreateRequest,
    run_body: ResponseCreateRequest,
    scope: str,
    reservation: background.Reservation,
    turn: ConversationTurn | None,
) -> Response:
    runtime = _runtime(state)
    continues = body.previous_response_id if run_body is not body else None
    snapshot = await background.submit(
        state,
        runtime,
        run_body,
        scope=scope,
        idempotency_key=background.check_idempotency_key(
            request.headers.get("idempotency-key")
        ),
        input_items=input_items_of(body) if state.responses is not None else None,
        continues=continues,
        reservation=reservation,
    )
    if turn is not None:
        # The claim's lease only covered the submit: from now on the queued
        # Response holds the Conversation until it ends (an Idempotency-Key's
        # original, returned instead, holds nothing for this request).
        await turn.end()
    if body.stream:
        return EventStreamResponse(
            background.replay(runtime, snapshot["id"], -1),
            ping_interval=state.ping_interval,
            ends_with=state.lifecycle,
            active=state.observer.stream_gauge("responses"),
        )
    return json_response(snapshot)


def _runtime(state: ServeState) -> BackgroundRuntime:
    if state.background is None:
        raise InvalidRequestError(
            "Background responses are not enabled.", param="background"
        )
    return state.background
