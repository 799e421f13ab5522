"""``POST /responses``: the foreground (stateless) Responses API."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.runner import (
    prepare_run,
    run_graph,
    run_to_completion,
)
from langgraph_openai_serve.openai.context import request_log
from langgraph_openai_serve.openai.jsonbody import json_response
from langgraph_openai_serve.openai.responses.decode import decode_response_request
from langgraph_openai_serve.openai.responses.encode import (
    ResponseStreamEncoder,
    stream_frames,
)
from langgraph_openai_serve.openai.responses.items import ResponseShell
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import serve_state

router = APIRouter()


@router.post("/responses", response_model=None)
async def create_response(body: ResponseCreateRequest, request: Request) -> Response:
    """Run the graph registered as ``body.model`` and return a Response."""
    state = serve_state(request)
    config = state.registry.get_graph(body.model)
    if body.background:
        raise InvalidRequestError(
            f"Model '{body.model}' does not support background responses.",
            param="background",
        )
    if body.previous_response_id is not None:
        raise InvalidRequestError(
            "previous_response_id only resumes a paused interrupt run; continue an "
            "ordinary conversation by replaying the previous output items.",
            param="previous_response_id",
        )
    log = request_log(request)
    if log is not None:
        log.model = body.model
    graph_request, messages = decode_response_request(
        body,
        file_inputs=config.supports(GraphFeature.FILE_INPUTS),
        server_tools=frozenset(config.server_tools),
    )
    run = await prepare_run(
        config,
        graph_request,
        messages,
        callbacks=state.callbacks(),
        request_id=log.request_id if log else None,
    )
    shell = ResponseShell.for_request(body)
    if body.stream:
        events = run_graph(run, stream=True, statuses=True)
        return EventStreamResponse(
            stream_frames(events, ResponseStreamEncoder(shell), log),
            ping_interval=state.ping_interval,
        )
    completed, activity = await run_to_completion(run)
    return json_response(shell.final_body(completed.answer, completed.usage, activity))
