"""``/batches``: create, retrieve, cancel and list batches.

Every route looks the batch up in the caller's scope, so another tenant's
batch is unknown (404, never 403). The work (validation, the lines on the
queue, the output files) is ``langgraph_openai_serve.batches``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from langgraph_openai_serve.batches import steps
from langgraph_openai_serve.batches.errors import BatchNotFoundError
from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.batches.schemas import BatchCreateRequest
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.request_body import openapi_body, parse_body
from langgraph_openai_serve.openai.state import ServeState, serve_state
from langgraph_openai_serve.routing import RequestRoute

router = APIRouter(route_class=RequestRoute)


@router.post(
    "/batches",
    response_model=None,
    openapi_extra=openapi_body(BatchCreateRequest),
    responses=error_responses(400, 413),
)
async def create_batch(request: Request) -> Response:
    """A new batch over an input file of purpose ``batch``; it validates the
    file, then runs each line."""
    state = serve_state(request)
    body = await parse_body(request, BatchCreateRequest, state.body_limits)
    expires = body.output_expires_after
    scope = await state.scope_for(request)
    batch = await steps.create(
        _runtime(state),
        scope,
        endpoint=body.endpoint,
        input_file_id=body.input_file_id,
        metadata=body.metadata,
        output_expires_after=expires.model_dump() if expires else None,
        most_open=state.gate.limits.of(scope).batches,
    )
    return json_response(batch)


@router.get("/batches/{batch_id}", response_model=None, responses=error_responses(404))
async def retrieve_batch(batch_id: str, request: Request) -> Response:
    state = serve_state(request)
    batch = await _runtime(state).store.get(batch_id, await state.scope_for(request))
    if batch is None:
        raise BatchNotFoundError(batch_id)
    return json_response(batch)


@router.post(
    "/batches/{batch_id}/cancel",
    response_model=None,
    responses=error_responses(404, 409),
)
async def cancel_batch(batch_id: str, request: Request) -> Response:
    """``cancelling`` at once; ``cancelled`` when the finished lines are in
    the output file and the others in the error file."""
    state = serve_state(request)
    scope = await state.scope_for(request)
    return json_response(await steps.cancel(_runtime(state), batch_id, scope))


@router.get("/batches", response_model=None, responses=error_responses(400))
async def list_batches(
    request: Request,
    after: str | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Response:
    """The caller's batches, newest first."""
    state = serve_state(request)
    scope = await state.scope_for(request)
    batches, has_more = await _runtime(state).store.page(scope, after, limit)
    return json_response(
        {
            "object": "list",
            "data": batches,
            "first_id": batches[0]["id"] if batches else None,
            "last_id": batches[-1]["id"] if batches else None,
            "has_more": has_more,
        }
    )


def _runtime(state: ServeState) -> BatchRuntime:
    if state.batches is None:
        raise InvalidRequestError("Batches are not enabled on this server.")
    return state.batches
