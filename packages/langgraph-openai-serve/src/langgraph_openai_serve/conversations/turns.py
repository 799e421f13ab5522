"""Adding a finished Response's turn to its Conversation.

Only a Response that happened adds to it (``completed`` or ``incomplete``,
a pause included): a failed or cancelled one adds nothing.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.conversations.protocol import ConversationStore

ADDED_STATUSES = frozenset({"completed", "incomplete"})


async def add_turn(
    conversations: ConversationStore,
    conversation_id: str,
    scope: str,
    input_items: list[dict[str, Any]],
    response: dict[str, Any],
) -> None:
    """Append the request's items then the Response's output, if it happened
    (a Conversation deleted meanwhile gets nothing), as the Response's turn:
    a re-run's turn replaces the one its lost attempt added."""
    if response.get("status") in ADDED_STATUSES:
        added = [*input_items, *response.get("output", ())]
        await conversations.add_items(
            conversation_id, scope, added, response_id=response["id"]
        )
