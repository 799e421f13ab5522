"""``conversation`` on create: run after the Conversation's items, then add
the request's input and the Response's output to it.

A Conversation runs one turn at a time (``conversations/turns.py``): the
request claims it and reads its items in one step, before anything is run
or stored, and another Response naming it meanwhile is refused with 400
``conversation_locked``. The graph sees the Conversation's items, oldest
first, then the request's input: what a client replaying them would send,
so any graph takes part. Once the Response has finished its input and
output items are appended (only turns that happened) and the claim ends; a
background Response's by the worker that ran it (``background/execute.py``).
The resume of a paused Response adds to the pause's Conversation, and
claims it the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langgraph_openai_serve.conversations.errors import (
    RequestConversationNotFoundError,
)
from langgraph_openai_serve.conversations.protocol import ConversationStore
from langgraph_openai_serve.conversations.turns import ConversationTurn
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.responses.chain import with_history
from langgraph_openai_serve.openai.responses.input_items import input_items_of
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.responses.protocol import ResponseStore

Settle = Callable[[dict[str, Any]], Awaitable[None]]
"""Called with the finished Response object before it is returned (a
stream's before its terminal event goes out)."""


async def conversation_request(
    conversations: ConversationStore | None,
    body: ResponseCreateRequest,
    scope: str,
    holder: str,
    *,
    lease: float,
) -> tuple[ResponseCreateRequest, ConversationTurn]:
    """The request the graph runs for ``body``, which names a Conversation,
    and the turn ``holder`` claimed on it (the caller ends it).

    Raises:
        InvalidRequestError: (``conversation``) the server keeps none, or
            ``body`` also names a previous Response.
        RequestConversationNotFoundError: unknown, deleted or another
            scope's Conversation.
        ConversationLockedError: another turn is running on it.
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
    begun = await ConversationTurn.begin(
        conversations, conversation_id, scope, holder, lease=lease
    )
    if begun is None:
        raise RequestConversationNotFoundError(conversation_id)
    turn, history = begun
    try:
        run_body = with_history(
            body,
            history,
            param="conversation",
            source=f"Conversation '{conversation_id}'",
        )
    except BaseException:
        await turn.end()
        raise
    return run_body, turn


async def paused_conversation_turn(
    conversations: ConversationStore,
    body: ResponseCreateRequest,
    paused: dict[str, Any],
    scope: str,
    holder: str,
    *,
    lease: float,
) -> tuple[ResponseCreateRequest, ConversationTurn | None]:
    """``body``, a resume of the kept Response ``paused``, naming the
    Conversation the pause was created with (if it was): the resumed answer
    is added to it and the Response shows it. A resume names its pause with
    ``previous_response_id``, so it cannot carry ``conversation`` itself.
    The resume is a turn of that Conversation: ``holder`` claims it (no
    turn when it was deleted meanwhile).

    Raises:
        ConversationLockedError: another turn is running on it.
    """
    conversation = paused.get("conversation") or {}
    if not isinstance(conversation, dict) or not conversation.get("id"):
        return body, None
    conversation_id = str(conversation["id"])
    body = body.model_copy(update={"conversation": conversation_id})
    begun = await ConversationTurn.begin(
        conversations, conversation_id, scope, holder, lease=lease, history=False
    )
    return body, begun[0] if begun else None


def settler(
    store: ResponseStore | None,
    scope: str,
    body: ResponseCreateRequest,
    turn: ConversationTurn | None,
) -> Settle | None:
    """What keeps a finished Response (``store``: the deployment keeps this
    one) and adds it to the Conversation ``turn`` claimed, ending the claim;
    ``None`` when there is nothing to do."""
    if store is None and turn is None:
        return None
    items = input_items_of(body)

    async def settle(response: dict[str, Any]) -> None:
        if store is not None:
            await store.save(scope, response, items)
        if turn is not None:
            await turn.add(items, response)

    return settle
