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

One turn at a time: a Response naming a Conversation first claims it
(``begin_turn``) for a holder, and reads its items in the same step, after
the claim. The claim ends when the turn's items are added with that holder
(``add_items``) or it is given up (``end_turn``); a holder that stops
renewing it (``renew_turn``: its process died) loses it ``lease`` seconds
after the last renewal. A holder that names a kept Response still queued or
running (a background one) keeps the claim until that Response has ended,
however long it waits or runs, and whichever worker runs it. While a turn
holds the Conversation, a second claim and items added by a client are
refused (``ConversationLockedError``).
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
        holder: str | None = None,
    ) -> bool:
        """Append the items whose ids it does not hold yet, in order;
        ``False`` when the Conversation is unknown.

        With ``response_id`` the items are that Response's turn: the items
        an earlier call added for the same Response are removed first, in the
        same step, and the turn goes at the end; ``holder``'s claim ends in
        that step too.

        Raises:
            ConversationLockedError: items that are no turn, while a turn
                holds the Conversation.
        """
        ...

    async def begin_turn(
        self,
        conversation_id: str,
        scope: str,
        holder: str,
        *,
        lease: float,
        history: bool = True,
    ) -> list[dict[str, Any]] | None:
        """Claim the Conversation for ``holder``'s turn for ``lease`` seconds,
        then read its items (oldest first; none unless ``history``), in one
        step; ``None`` when unknown.

        Raises:
            ConversationLockedError: another turn holds it.
        """
        ...

    async def renew_turn(
        self, conversation_id: str, holder: str, *, lease: float
    ) -> bool:
        """Extend ``holder``'s claim to ``lease`` seconds from now; ``False``
        when it no longer holds one (it ended, expired or was deleted)."""
        ...

    async def end_turn(self, conversation_id: str, holder: str) -> None:
        """End ``holder``'s claim (a turn that adds nothing)."""
        ...

    async def item(
        self, conversation_id: str, item_id: str, scope: str
    ) -> dict[str, Any] | None: ...

    async def delete_item(self, conversation_id: str, item_id: str, scope: str) -> bool:
        """``False`` when the Conversation or the item is unknown."""
        ...
