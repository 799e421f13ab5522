"""``POST /responses``: create a Response, in the foreground or background.

A request goes forward through one step after another, each a module of
its own: the body is parsed (``schemas``), admitted (``admission``), read
for what it continues (``continuation``: a Conversation, a kept chain or a
paused run), then run in the foreground (``foreground``) or submitted to
the background (``background/respond.py``), which answers it. Retrieve,
cancel, delete and ``input_items`` are in ``stored.py``. Without a response
store nothing here touches one.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from langgraph_openai_serve.openai.admitted import released_with
from langgraph_openai_serve.openai.context import request_log
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.request_body import openapi_body, parse_body
from langgraph_openai_serve.openai.responses.admission import admit
from langgraph_openai_serve.openai.responses.background.respond import (
    respond_in_background,
)
from langgraph_openai_serve.openai.responses.continuation import Continued, continued
from langgraph_openai_serve.openai.responses.foreground import respond_in_foreground
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.responses.statuses import chosen
from langgraph_openai_serve.openai.state import serve_state
from langgraph_openai_serve.routing import RequestRoute

router = APIRouter(route_class=RequestRoute)


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
    body = chosen(body, state.responses_status_as_reasoning)
    config = admit(state, body)
    log = request_log(request)
    if log is not None:
        log.model = body.model
    scope = await state.scope_for(request)
    # Refused before anything is claimed or read: a foreground run (or a
    # background one's stream) past a limit costs the server nothing.
    admitted = (
        state.follow(request, body.stream)
        if body.background
        else await state.admit(request, scope)
    )
    going_on: Continued | None = None
    try:
        going_on = await continued(state, config, body, scope)
        if going_on.reservation is not None:
            key = request.headers.get("idempotency-key")
            answer = await respond_in_background(state, going_on, key)
        else:
            answer = await respond_in_foreground(state, config, going_on, log)
    except BaseException:
        if going_on is not None and going_on.turn is not None:
            await going_on.turn.end()  # nothing happened (a turn added ends itself)
        if admitted is not None:
            admitted.release()
        raise
    return released_with(answer, admitted)
