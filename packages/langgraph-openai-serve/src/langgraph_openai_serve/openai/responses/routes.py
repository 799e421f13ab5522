"""``POST /responses``: the foreground Responses API (and interrupt resumes)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from langchain_core.messages import BaseMessage
from starlette.responses import Response

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.events import RunPaused
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.interrupts import pause_answer
from langgraph_openai_serve.graph.runner import (
    prepare_run,
    run_graph,
    run_to_completion,
)
from langgraph_openai_serve.openai.context import request_log
from langgraph_openai_serve.openai.jsonbody import json_response
from langgraph_openai_serve.openai.responses.decode import (
    decode_response_request,
    decode_resume,
    ends_with_interrupt_answers,
)
from langgraph_openai_serve.openai.responses.encode import (
    ResponseStreamEncoder,
    stream_frames,
)
from langgraph_openai_serve.openai.responses.interrupt_runs import (
    InterruptRun,
    open_interrupt_run,
    releasing,
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
    interrupts = config.supports(GraphFeature.INTERRUPTS)
    if body.background:
        raise InvalidRequestError(
            f"Model '{body.model}' does not support background responses.",
            param="background",
        )
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
    server_tools = frozenset(config.server_tools)
    answers = None
    if resuming:
        graph_request, answers = decode_resume(body, server_tools=server_tools)
        messages: list[BaseMessage] = []
    else:
        graph_request, messages = decode_response_request(
            body,
            file_inputs=config.supports(GraphFeature.FILE_INPUTS),
            server_tools=server_tools,
        )
    lease: InterruptRun | None = None
    if interrupts:
        lease = await open_interrupt_run(
            state, config, request, graph_request, body.previous_response_id
        )
    try:
        run = await prepare_run(
            config,
            graph_request,
            messages,
            callbacks=state.callbacks(),
            request_id=log.request_id if log else None,
            interrupt_thread=lease.thread_id if lease else None,
            answers=answers,
        )
        shell = ResponseShell.for_request(
            body, response_id=lease.response_id if lease else None
        )
        if body.stream:
            events = run_graph(run, stream=True, statuses=True)
            frames = stream_frames(events, ResponseStreamEncoder(shell), log)
            if lease is not None:
                frames, lease = releasing(lease, frames), None
            return EventStreamResponse(frames, ping_interval=state.ping_interval)
        completed, activity = await run_to_completion(run)
    finally:
        if lease is not None:
            await lease.release()
    if isinstance(completed, RunPaused):
        answer = pause_answer(completed.interrupts, completed.text)
        return json_response(shell.final_body(answer, completed.usage))
    return json_response(shell.final_body(completed.answer, completed.usage, activity))
