"""The contract of kept Conversations: the ``ConversationStore``.

A Conversation is an ordered list of Responses items in a scope (the
tenant), with metadata. Clients add items directly, and a Response created
with ``conversation`` adds its input and output items once it has finished.
Items keep their ids, and an id already in the Conversation is not added a
second time, so adding the same items again changes nothing. A Response adds
its turn once: when it adds one again (a background run re-run after its
worker was lost between adding the turn and storing its end), the new turn
replaces the old one, so the Conversation holds what the Response's final
snapshot holds. Conversations are kept until deleted: the response retention
does not expire them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from langgraph_openai_serve.conversations.pages import ItemPage, Order


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    created_at: int
    """Unix seconds."""
    metadata: dict[str, str]

    def body(self) -> dict[str, Any]:
        """The OpenAI Conversation object."""
        return {
            "id": self.id,
            "object": "conversation",
            "created_at": self.created_at,
            "metadata": self.metadata,
        }


class ConversationStore(Protocol):
    """Every method looks the Conversation up in ``scope``: one of another
    scope is unknown."""

    async def create(
        self, scope: str, conversation: Conversation, items: list[dict[str, Any]]
    ) -> None:
        """Keep a new Conversation with its first items (full, with ids)."""
        ...

    async def get(self, conversation_id: str, scope: str) -> Conversation | None: ...

    async def update(
        self, conversation_id: str, scope: str, metadata: dict[str, str]
    ) -> Conversation | None:
        """Replace the metadata; ``None`` when unknown."""
        ...

    async def delete(self, conversation_id: str, scope: str) -> bool:
        """Remove the Conversation and its items; ``False`` when unknown."""
        ...

    async def items(
        self, conversation_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        """Every item, oldest first; ``None`` when unknown."""
        ...

    async def page(
        self,
        conversation_id: str,
        scope: str,
        *,
        limit: int,
        order: Order,
        after: str | None,
    ) -> ItemPage | None:
        """Up to ``limit`` items in ``order``, after the item ``after``
        (``pages.page_of``'s rules), read without reading the others;
        ``None`` when unknown.

        Raises:
            AfterItemNotFound: the Conversation holds no item ``after``.
        """
        ...

    async def add_items(
        self,
        conversation_id: str,
        scope: str,
        items: list[dict[str, Any]],
        *,
        response_id: str | None = None,
    ) -> bool:
        """Append the items whose ids it does not hold yet, in order;
        ``False`` when the Conversation is unknown.

        With ``response_id`` the items are that Response's turn: the items
        an earlier call added for the same Response are removed first, in the
        same step, and the turn goes at the end."""
        ...

    async def item(
        self, conversation_id: str, item_id: str, scope: str
    ) -> dict[str, Any] | None: ...

    async def delete_item(self, conversation_id: str, item_id: str, scope: str) -> bool:
        """``False`` when the Conversation or the item is unknown."""
        ...
