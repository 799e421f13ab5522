"""A Response's turn on its Conversation: the claim that keeps other turns
out while it runs, and adding what it said once it has finished.

Only a Response that happened adds to it (``completed`` or ``incomplete``,
a pause included): a failed or cancelled one adds nothing. A paused
Response is a finished turn (as a Response that ends in a function call is
at OpenAI): it ends its claim, and its resume claims the Conversation again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langgraph_openai_serve.conversations.protocol import ConversationStore

logger = logging.getLogger("langgraph_openai_serve")

ADDED_STATUSES = frozenset({"completed", "incomplete"})


async def add_turn(
    conversations: ConversationStore,
    conversation_id: str,
    scope: str,
    input_items: list[dict[str, Any]],
    response: dict[str, Any],
    *,
    holder: str | None = None,
) -> None:
    """Append the request's items then the Response's output, if it happened
    (a Conversation deleted meanwhile gets nothing), as the Response's turn:
    a re-run's turn replaces the one its lost attempt added. ``holder``'s
    claim on the Conversation ends in the same step, whether the turn adds
    anything or not."""
    if response.get("status") in ADDED_STATUSES:
        added = [*input_items, *response.get("output", ())]
        await conversations.add_items(
            conversation_id, scope, added, response_id=response["id"], holder=holder
        )
    elif holder is not None:
        await conversations.end_turn(conversation_id, holder)


class ConversationTurn:
    """The claim one Response holds on its Conversation, from before it runs
    until its turn is added or it gives the claim up.

    A foreground turn renews its claim while it runs (``keep_alive``), so a
    process that dies loses it ``lease`` seconds later. A background turn's
    holder is its Response: once that is stored the lease is ended, and the
    store keeps the claim while the Response is queued or running,
    whichever process runs it.
    """

    def __init__(
        self,
        conversations: ConversationStore,
        conversation_id: str,
        scope: str,
        holder: str,
        lease: float,
    ) -> None:
        self.conversations = conversations
        self.conversation_id = conversation_id
        self.scope = scope
        self.holder = holder
        self.lease = lease
        self.ended = False
        self._renewal: asyncio.Task[None] | None = None

    @classmethod
    async def begin(
        cls,
        conversations: ConversationStore,
        conversation_id: str,
        scope: str,
        holder: str,
        *,
        lease: float,
        history: bool = True,
    ) -> tuple[ConversationTurn, list[dict[str, Any]]] | None:
        """Claim the Conversation and read its items (``history``) in one
        step; ``None`` when it is unknown.

        Raises:
            ConversationLockedError: another turn holds it.
        """
        items = await conversations.begin_turn(
            conversation_id, scope, holder, lease=lease, history=history
        )
        if items is None:
            return None
        return cls(conversations, conversation_id, scope, holder, lease), items

    def keep_alive(self) -> None:
        """Renew the claim every third of its lease until the turn ends."""
        if self._renewal is None and not self.ended:
            self._renewal = asyncio.create_task(
                self._renew(), name=f"lgos-turn-{self.conversation_id}"
            )

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                held = await self.conversations.renew_turn(
                    self.conversation_id, self.holder, lease=self.lease
                )
            except Exception:
                logger.warning(
                    "conversation.renew_failed conversation=%s",
                    self.conversation_id,
                    exc_info=True,
                )
                continue
            if not held:
                logger.warning(
                    "conversation.claim_lost conversation=%s: the turn outlived "
                    "its claim or the Conversation was deleted",
                    self.conversation_id,
                )
                return

    async def add(
        self, input_items: list[dict[str, Any]], response: dict[str, Any]
    ) -> None:
        """Add the finished turn (``add_turn``); the claim ends with it."""
        self._stop_renewal()
        await add_turn(
            self.conversations,
            self.conversation_id,
            self.scope,
            input_items,
            response,
            holder=self.holder,
        )
        self.ended = True

    async def end(self) -> None:
        """Give the claim up, adding nothing; a turn already added does
        nothing. A cancelled caller still ends it."""
        self._stop_renewal()
        if self.ended:
            return
        self.ended = True
        try:
            await asyncio.shield(
                self.conversations.end_turn(self.conversation_id, self.holder)
            )
        except Exception:  # the claim lapses after its lease instead
            logger.warning(
                "conversation.end_failed conversation=%s",
                self.conversation_id,
                exc_info=True,
            )

    def _stop_renewal(self) -> None:
        if self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None
