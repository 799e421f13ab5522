"""``conversation`` on create: run after the Conversation's items, then add
the request's input and the Response's output to it.

The graph sees the Conversation's items, oldest first, then the request's
input: what a client replaying them would send, so any graph takes part.
Once the Response has finished its input and output items are appended
(``conversations/turns.py``: only turns that happened); a background
Response's by the worker that ran it (``background/executor.py``). The
resume of a paused Response adds to the pause's Conversation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langgraph_openai_serve.background.protocol import ResponseStore
from langgraph_openai_serve.conversations.errors import (
    RequestConversationNotFoundError,
)
from langgraph_openai_serve.conversations.protocol import ConversationStore
from langgraph_openai_serve.conversations.turns import add_turn
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.responses.chain import with_history
from langgraph_openai_serve.openai.responses.input_items import input_items_of
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest

Settle = Callable[[dict[str, Any]], Awaitable[None]]
"""Called with the finished Response object before it is returned (a
stream's before its terminal event goes out)."""


async def conversation_request(
    conversations: ConversationStore | None,
    body: ResponseCreateRequest,
    scope: str,
) -> ResponseCreateRequest:
    """The request the graph runs for ``body``, which names a Conversation.

    Raises:
        InvalidRequestError: (``conversation``) the server keeps none, or
            ``body`` also names a previous Response.
        RequestConversationNotFoundError: unknown, deleted or another
            scope's Conversation.
    """
    conversation_id = body.conversation_id
    assert conversation_id is not None
    if conversations is None:
        raise InvalidRequestError(
            "This server keeps no conversations; replay the previous output "
            "items in 'input' instead.",
            param="conversation",
        )
    if body.previous_response_id is not None:
        raise InvalidRequestError(
            "Mutually exclusive parameters: send either 'conversation' or "
            "'previous_response_id', not both.",
            param="conversation",
        )
    history = await conversations.items(conversation_id, scope)
    if history is None:
        raise RequestConversationNotFoundError(conversation_id)
    return with_history(
        body, history, param="conversation", source=f"Conversation '{conversation_id}'"
    )


def with_paused_conversation(
    body: ResponseCreateRequest, paused: dict[str, Any]
) -> ResponseCreateRequest:
    """``body``, a resume of the kept Response ``paused``, naming the
    Conversation the pause was created with (if it was): the resumed answer
    is added to it and the Response shows it. A resume names its pause with
    ``previous_response_id``, so it cannot carry ``conversation`` itself."""
    conversation = paused.get("conversation") or {}
    if not isinstance(conversation, dict) or not conversation.get("id"):
        return body
    return body.model_copy(update={"conversation": str(conversation["id"])})


def settler(
    store: ResponseStore | None,
    conversations: ConversationStore | None,
    scope: str,
    body: ResponseCreateRequest,
) -> Settle | None:
    """What keeps a finished Response (``store``: the deployment keeps this
    one) and adds it to its Conversation; ``None`` when there is nothing to
    do."""
    conversation_id = body.conversation_id if conversations is not None else None
    if store is None and conversation_id is None:
        return None
    items = input_items_of(body)

    async def settle(response: dict[str, Any]) -> None:
        if store is not None:
            await store.save(scope, response, items)
        if conversations is not None and conversation_id is not None:
            await add_turn(conversations, conversation_id, scope, items, response)

    return settle
