"""``/conversations``: create, retrieve, update and delete Conversations, and
list, add, retrieve and delete their items.

Conversations exist when the deployment keeps Responses
(``LGOS_RESPONSE_STORE``); otherwise creating one answers 400 and every
other route 404. Every route looks the Conversation up in the caller's
scope, so another tenant's is unknown (404, never 403). A Response created
with ``conversation`` adds to one (``openai/responses/conversation.py``).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from langgraph_openai_serve.compact_json import json_response
from langgraph_openai_serve.conversations.errors import (
    ConversationItemNotFoundError,
    ConversationNotFoundError,
)
from langgraph_openai_serve.conversations.pages import AfterItemNotFound
from langgraph_openai_serve.conversations.protocol import (
    Conversation,
    ConversationStore,
)
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.conversations.schemas import (
    ConversationCreateRequest,
    ConversationItemsCreateRequest,
    ConversationUpdateRequest,
)
from langgraph_openai_serve.openai.error_docs import error_responses
from langgraph_openai_serve.openai.request_body import openapi_body, parse_body
from langgraph_openai_serve.openai.responses.input_items import (
    check_include,
    full_items,
    unknown_cursor,
)
from langgraph_openai_serve.openai.responses.items import new_id
from langgraph_openai_serve.openai.state import serve_state
from langgraph_openai_serve.routing import RequestRoute

router = APIRouter(route_class=RequestRoute)

BODY_MODELS = (
    ConversationCreateRequest,
    ConversationUpdateRequest,
    ConversationItemsCreateRequest,
)
"""Documented in the OpenAPI components (``openapi_body`` points there)."""


@router.post(
    "/conversations",
    response_model=None,
    openapi_extra=openapi_body(ConversationCreateRequest),
    responses=error_responses(400, 413),
)
async def create_conversation(request: Request) -> Response:
    """A new Conversation, with metadata and up to 20 first items."""
    state = serve_state(request)
    if state.conversations is None:
        raise InvalidRequestError(
            "This server keeps no conversations; replay the previous output "
            "items in 'input' instead."
        )
    body = await parse_body(request, ConversationCreateRequest, state.body_limits)
    conversation = Conversation(
        id=new_id("conv"), created_at=int(time.time()), metadata=body.metadata or {}
    )
    items = full_items(body.items or [])
    await state.conversations.create(
        await state.scope_for(request), conversation, items
    )
    return json_response(conversation.body())


@router.get(
    "/conversations/{conversation_id}",
    response_model=None,
    responses=error_responses(),
)
async def retrieve_conversation(conversation_id: str, request: Request) -> Response:
    store, scope = await _store_and_scope(request, conversation_id)
    return json_response((await _found(store, conversation_id, scope)).body())


@router.post(
    "/conversations/{conversation_id}",
    response_model=None,
    openapi_extra=openapi_body(ConversationUpdateRequest),
    responses=error_responses(400, 413),
)
async def update_conversation(conversation_id: str, request: Request) -> Response:
    """Replace the Conversation's metadata."""
    store, scope = await _store_and_scope(request, conversation_id)
    body = await parse_body(
        request, ConversationUpdateRequest, serve_state(request).body_limits
    )
    updated = await store.update(conversation_id, scope, body.metadata)
    if updated is None:
        raise ConversationNotFoundError(conversation_id)
    return json_response(updated.body())


@router.delete(
    "/conversations/{conversation_id}",
    response_model=None,
    responses=error_responses(),
)
async def delete_conversation(conversation_id: str, request: Request) -> Response:
    """Delete the Conversation and its items (not the Responses that added
    to it)."""
    store, scope = await _store_and_scope(request, conversation_id)
    if not await store.delete(conversation_id, scope):
        raise ConversationNotFoundError(conversation_id)
    return json_response(
        {"id": conversation_id, "object": "conversation.deleted", "deleted": True}
    )


@router.get(
    "/conversations/{conversation_id}/items",
    response_model=None,
    responses=error_responses(400),
)
async def list_items(
    conversation_id: str,
    request: Request,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    order: Literal["asc", "desc"] = "desc",
    after: str | None = None,
) -> Response:
    """One page of the Conversation's items (``asc``: oldest first)."""
    _check_include(request)
    store, scope = await _store_and_scope(request, conversation_id)
    try:
        page = await store.page(
            conversation_id, scope, limit=limit, order=order, after=after
        )
    except AfterItemNotFound:
        raise unknown_cursor("item", "this conversation", after) from None
    if page is None:
        raise ConversationNotFoundError(conversation_id)
    return json_response(page.body())


@router.post(
    "/conversations/{conversation_id}/items",
    response_model=None,
    openapi_extra=openapi_body(ConversationItemsCreateRequest),
    responses=error_responses(400, 413),
)
async def create_items(conversation_id: str, request: Request) -> Response:
    """Append up to 20 items; returns them as a list, with their ids."""
    _check_include(request)
    store, scope = await _store_and_scope(request, conversation_id)
    body = await parse_body(
        request, ConversationItemsCreateRequest, serve_state(request).body_limits
    )
    items = full_items(body.items)
    if not await store.add_items(conversation_id, scope, items):
        raise ConversationNotFoundError(conversation_id)
    return json_response(_list(items))


@router.get(
    "/conversations/{conversation_id}/items/{item_id}",
    response_model=None,
    responses=error_responses(400),
)
async def retrieve_item(
    conversation_id: str, item_id: str, request: Request
) -> Response:
    _check_include(request)
    store, scope = await _store_and_scope(request, conversation_id)
    item = await store.item(conversation_id, item_id, scope)
    if item is None:
        await _found(store, conversation_id, scope)
        raise ConversationItemNotFoundError(conversation_id, item_id)
    return json_response(item)


@router.delete(
    "/conversations/{conversation_id}/items/{item_id}",
    response_model=None,
    responses=error_responses(),
)
async def delete_item(conversation_id: str, item_id: str, request: Request) -> Response:
    """Delete one item; returns the Conversation."""
    store, scope = await _store_and_scope(request, conversation_id)
    if not await store.delete_item(conversation_id, item_id, scope):
        await _found(store, conversation_id, scope)
        raise ConversationItemNotFoundError(conversation_id, item_id)
    return json_response((await _found(store, conversation_id, scope)).body())


async def _store_and_scope(
    request: Request, conversation_id: str
) -> tuple[ConversationStore, str]:
    """The Conversations store and the caller's scope; a server that keeps
    none knows no Conversation."""
    state = serve_state(request)
    if state.conversations is None:
        raise ConversationNotFoundError(conversation_id)
    return state.conversations, await state.scope_for(request)


async def _found(
    store: ConversationStore, conversation_id: str, scope: str
) -> Conversation:
    conversation = await store.get(conversation_id, scope)
    if conversation is None:
        raise ConversationNotFoundError(conversation_id)
    return conversation


def _check_include(request: Request) -> None:
    check_include(
        request.query_params.getlist("include")
        + request.query_params.getlist("include[]")
    )


def _list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": items,
        "first_id": items[0]["id"] if items else None,
        "last_id": items[-1]["id"] if items else None,
        "has_more": False,
    }
