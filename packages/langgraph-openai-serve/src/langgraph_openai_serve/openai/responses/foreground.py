"""A Response run in the foreground: the graph runs now, in the request,
and the answer is its stream or its finished object.

With a response store the finished Response is kept after it is built (a
stream's before its terminal event goes out, so a client holding its id can
use it at once); a Conversation turn's claim is renewed while its stream
flows and ends once its Response is kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial

from starlette.responses import Response

from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.conversations.turns import ConversationTurn
from langgraph_openai_serve.graph.completion import run_to_completion
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.events import RunPaused
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.runner import run_graph
from langgraph_openai_serve.openai.context import RequestLog
from langgraph_openai_serve.openai.responses.approvals import (
    InterruptRejected,
    rejected_body,
)
from langgraph_openai_serve.openai.responses.continuation import Continued
from langgraph_openai_serve.openai.responses.conversation import settler
from langgraph_openai_serve.openai.responses.encode import ResponseStreamEncoder
from langgraph_openai_serve.openai.responses.interrupt_runs import releasing
from langgraph_openai_serve.openai.responses.pause import paused_items
from langgraph_openai_serve.openai.responses.runs import open_run
from langgraph_openai_serve.openai.responses.stream import stream_frames
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import ServeState
from langgraph_openai_serve.openai.stream_failure import SHUTDOWN_FAILURE


async def respond_in_foreground(
    state: ServeState,
    config: GraphConfig,
    request: Continued,
    log: RequestLog | None,
) -> Response:
    """Run the graph for the request and answer, streamed or not; a turn's
    claim ends once its Response is kept (or the stream ends without one)."""
    body, run_body, scope, turn = (
        request.body,
        request.run_body,
        request.scope,
        request.turn,
    )
    if turn is not None and not body.stream:
        turn.keep_alive()  # a stream's turn renews from its first frame
    store = state.responses
    kept = store is not None and body.store is not False
    keep = settler(store if kept else None, scope, body, turn)
    watch = state.observer.run(
        body.model,
        "responses",
        requested=log.started if log is not None and body.stream else None,
        conversation=body.conversation_id,
    )
    background = state.background
    try:
        opened = await open_run(
            state,
            config,
            run_body,
            scope=scope,
            request_id=log.request_id if log else None,
            kept=kept,
            continues=request.continues,
            callbacks=watch.callbacks,
            # A pause a background resume was accepted for is that one's.
            background=(
                background.store
                if background is not None and config.supports(GraphFeature.BACKGROUND)
                else None
            ),
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
