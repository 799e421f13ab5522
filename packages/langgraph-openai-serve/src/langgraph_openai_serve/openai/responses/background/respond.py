"""A Response run in the background: submitted, then answered with its
queued snapshot or with its stream, followed as the run makes it."""

from __future__ import annotations

from starlette.responses import Response

from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.openai.responses.background.control import replay
from langgraph_openai_serve.openai.responses.background.submit import (
    Kept,
    check_idempotency_key,
    submit,
)
from langgraph_openai_serve.openai.responses.continuation import Continued
from langgraph_openai_serve.openai.responses.input_items import input_items_of
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import ServeState


async def respond_in_background(
    state: ServeState, request: Continued, idempotency_key: str | None
) -> Response:
    """Submit the request and answer with the queued Response, or with its
    stream as the run makes it (from any process)."""
    runtime = state.background
    assert runtime is not None, "admitted without a background runtime"
    assert request.reservation is not None, "a foreground request"
    body, turn = request.body, request.turn
    snapshot = await submit(
        state,
        runtime,
        request.run_body,
        request.reservation,
        scope=request.scope,
        idempotency_key=check_idempotency_key(idempotency_key),
        kept=Kept(
            input_items_of(body) if state.responses is not None else None,
            request.continues,
        ),
    )
    if turn is not None:
        # The claim's lease only covered the submit: from now on the queued
        # Response holds the Conversation until it ends (an Idempotency-Key's
        # original, returned instead, holds nothing for this request).
        await turn.end()
    if body.stream:
        return EventStreamResponse(
            replay(runtime, snapshot["id"], -1),
            ping_interval=state.ping_interval,
            ends_with=state.lifecycle,
            active=state.observer.stream_gauge("responses"),
        )
    return json_response(snapshot)
