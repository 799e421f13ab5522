"""``POST /chat/completions``."""

from __future__ import annotations

from functools import partial

from fastapi import APIRouter, Request
from starlette.responses import Response

from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.graph.completion import run_to_completion
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import GraphError
from langgraph_openai_serve.graph.events import RunCompleted
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.runner import prepare_run, run_graph
from langgraph_openai_serve.openai.admitted import released_with
from langgraph_openai_serve.openai.chat.decode import (
    check_graph_serves_chat,
    decode_chat_request,
)
from langgraph_openai_serve.openai.chat.encode import (
    ChatStreamEncoder,
    completion_body,
    new_completion_id,
    stream_frames,
)
from langgraph_openai_serve.openai.chat.generation import chat_generation
from langgraph_openai_serve.openai.chat.schemas import ChatCompletionRequest
from langgraph_openai_serve.openai.context import request_log
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.request_body import openapi_body, parse_body
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import ServeState, serve_state
from langgraph_openai_serve.openai.stream_failure import SHUTDOWN_FAILURE
from langgraph_openai_serve.routing import RequestRoute

router = APIRouter(route_class=RequestRoute)


@router.post(
    "/chat/completions",
    response_model=None,
    openapi_extra=openapi_body(ChatCompletionRequest),
    responses=error_responses(400, 413, 504),
)
async def create_chat_completion(request: Request) -> Response:
    """Run the graph registered as ``body.model`` over the conversation."""
    state = serve_state(request)
    body = await parse_body(request, ChatCompletionRequest, state.body_limits)
    config = state.registry.get_graph(body.model)
    check_graph_serves_chat(config, body)
    scope = await state.scope_for(request)
    admitted = await state.admit(request, scope)
    try:
        answer = await _complete(request, state, body, config, scope)
    except BaseException:
        if admitted is not None:
            admitted.release()
        raise
    return released_with(answer, admitted)


async def _complete(
    request: Request,
    state: ServeState,
    body: ChatCompletionRequest,
    config: GraphConfig,
    scope: str,
) -> Response:
    """Run the graph (for the tenant ``scope``): its stream, or its finished
    completion."""
    log = request_log(request)
    if log is not None:
        log.model = body.model
    graph_request, messages = decode_chat_request(
        body,
        file_inputs=config.supports(GraphFeature.FILE_INPUTS),
        generation=chat_generation(body, config),
        scope=scope,
    )
    completion_id = new_completion_id()
    watch = state.observer.run(
        body.model,
        "chat",
        requested=log.started if log is not None and body.stream else None,
        response_id=completion_id,
    )
    run = await prepare_run(
        config,
        graph_request,
        messages,
        callbacks=state.callbacks() + watch.callbacks,
        request_id=log.request_id if log else None,
        scope=scope,
    )
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        encoder = ChatStreamEncoder(
            body.model, include_usage=include_usage, completion_id=completion_id
        )
        events = run_graph(run, stream=True, statuses=state.chat_status_as_reasoning)
        return EventStreamResponse(
            stream_frames(
                events, encoder, log, time_limit=state.run_timeout, watch=watch
            ),
            ping_interval=state.ping_interval,
            on_cut=partial(encoder.error, SHUTDOWN_FAILURE),
            active=state.observer.stream_gauge("chat"),
        )
    # Chat selects no server tools and never runs interrupt graphs.
    completed, _ = await run_to_completion(
        run, time_limit=state.run_timeout, watch=watch
    )
    if not isinstance(completed, RunCompleted):
        raise GraphError("A Chat Completions run paused.")
    return json_response(
        completion_body(body.model, completed.answer, completed.usage, completion_id)
    )
