"""``/responses/{id}``: retrieve, cancel, delete and list the input items.

Background Responses are always kept while they exist; with a response store
(``LGOS_RESPONSE_STORE``) finished foreground ones are too, in the same
store. Every route looks the id up in the caller's scope: an unknown id, one
of another scope and a foreground id of a server that keeps nothing all get
the same 404.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.admitted import released_with
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.responses.background.control import cancel, replay
from langgraph_openai_serve.openai.responses.input_items import (
    check_include,
    items_page,
    used_items,
)
from langgraph_openai_serve.openai.sse import EventStreamResponse
from langgraph_openai_serve.openai.state import ServeState, serve_state
from langgraph_openai_serve.responses.errors import (
    ResponseInProgressError,
    ResponseNotFoundError,
)
from langgraph_openai_serve.responses.protocol import TERMINAL_STATUSES, ResponseStore
from langgraph_openai_serve.routing import RequestRoute

router = APIRouter(route_class=RequestRoute)


@router.get(
    "/responses/{response_id}", response_model=None, responses=error_responses(400)
)
async def retrieve_response(
    response_id: str,
    request: Request,
    stream: bool = False,
    starting_after: Annotated[int, Query(ge=-1)] = -1,
) -> Response:
    """A kept Response as it is now, or a background Response's event stream
    from ``starting_after`` (any API process can serve it)."""
    state = serve_state(request)
    store = _store(state, response_id)
    snapshot = await store.get(response_id, await state.scope_for(request))
    if snapshot is None:
        raise ResponseNotFoundError(response_id)
    if stream:
        if not snapshot.get("background") or state.background is None:
            raise InvalidRequestError(
                "Only a background response can be streamed again; retrieve "
                "this one without 'stream'.",
                param="stream",
            )
        following = state.follow(request)
        return released_with(
            EventStreamResponse(
                replay(state.background, response_id, starting_after),
                ping_interval=state.ping_interval,
                ends_with=state.lifecycle,
                active=state.observer.stream_gauge("responses"),
            ),
            following,
        )
    return json_response(snapshot)


@router.post(
    "/responses/{response_id}/cancel",
    response_model=None,
    responses=error_responses(400),
)
async def cancel_response(response_id: str, request: Request) -> Response:
    """Cancel a background Response; cancelling a finished one changes nothing."""
    state = serve_state(request)
    store = _store(state, response_id)
    scope = await state.scope_for(request)
    snapshot = await store.get(response_id, scope)
    if snapshot is None:
        raise ResponseNotFoundError(response_id)
    if not snapshot.get("background") or state.background is None:
        raise InvalidRequestError("Only a background response can be cancelled.")
    await cancel(state.background, response_id)
    return json_response(await store.get(response_id, scope))


@router.delete(
    "/responses/{response_id}",
    response_model=None,
    responses=error_responses(409),
)
async def delete_response(response_id: str, request: Request) -> Response:
    """Delete a kept Response with its items (and a background one's events).

    A background Response still queued or running answers 409: cancel it
    first."""
    state = serve_state(request)
    store = _kept(state, response_id)
    scope = await state.scope_for(request)
    snapshot = await store.get(response_id, scope)
    if snapshot is None:
        raise ResponseNotFoundError(response_id)
    if snapshot.get("status") not in TERMINAL_STATUSES:
        raise ResponseInProgressError(response_id)
    if not await store.delete(response_id, scope):
        raise ResponseNotFoundError(response_id)  # deleted meanwhile
    return json_response({"id": response_id, "object": "response", "deleted": True})


@router.get(
    "/responses/{response_id}/input_items",
    response_model=None,
    responses=error_responses(400),
)
async def list_input_items(
    response_id: str,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    order: Literal["asc", "desc"] = "desc",
    after: str | None = None,
    before: str | None = None,
) -> Response:
    """The items the Response was generated from, as an OpenAI list: those of
    the Responses it continues (``previous_response_id``), then its own
    input; ``after`` and ``before`` page through the whole list (``include``
    values are accepted; LGOS keeps nothing they would add)."""
    state = serve_state(request)
    check_include(
        request.query_params.getlist("include")
        + request.query_params.getlist("include[]")
    )
    store = _kept(state, response_id)
    chain = await store.chain(response_id, await state.scope_for(request))
    if chain is None:
        raise ResponseNotFoundError(response_id)
    return json_response(
        items_page(
            used_items(chain), limit=limit, order=order, after=after, before=before
        )
    )


def _store(state: ServeState, response_id: str) -> ResponseStore:
    """The store of kept Responses, or of background ones when nothing else
    is kept."""
    if state.responses is not None:
        return state.responses
    if state.background is not None:
        return state.background.store
    raise ResponseNotFoundError(response_id)


def _kept(state: ServeState, response_id: str) -> ResponseStore:
    """Deleting and listing items need a response store."""
    if state.responses is None:
        raise ResponseNotFoundError(response_id)
    return state.responses
