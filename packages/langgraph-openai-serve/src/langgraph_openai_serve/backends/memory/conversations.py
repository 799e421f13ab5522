"""``InMemoryConversationStore``: Conversations in this process's memory
(``LGOS_RESPONSE_STORE=memory``).

A turn's claim lives on its Conversation's record. Everything here runs on
one event loop without awaiting between a check and its change, so claims
need no other lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph_openai_serve.conversations.errors import ConversationLockedError
from langgraph_openai_serve.conversations.pages import ItemPage, Order, page_of
from langgraph_openai_serve.conversations.protocol import Conversation


@dataclass
class _Claim:
    holder: str
    expires: float | None
    """Monotonic time the claim lapses at; ``None``: ended by its holder."""


@dataclass
class _Record:
    scope: str
    conversation: Conversation
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    """By id, in the order they were added (dicts keep insertion order)."""
    turns: dict[str, list[str]] = field(default_factory=dict)
    """The ids each Response added, by Response id."""
    claim: _Claim | None = None


class InMemoryConversationStore:
    """A ``ConversationStore`` in a dict.

    ``unfinished(response_id)`` says whether a kept Response is still queued
    or running (the response store's ``unfinished``): its turn keeps the
    Conversation until it ends.
    """

    def __init__(
        self,
        *,
        unfinished: Callable[[str], bool] = lambda _: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._records: dict[str, _Record] = {}
        self._unfinished = unfinished
        self._clock = clock

    async def create(
        self, scope: str, conversation: Conversation, items: list[dict[str, Any]]
    ) -> None:
        record = _Record(scope, conversation)
        _add(record, items)
        self._records[conversation.id] = record

    async def get(self, conversation_id: str, scope: str) -> Conversation | None:
        record = self._find(conversation_id, scope)
        return record.conversation if record else None

    async def update(
        self, conversation_id: str, scope: str, metadata: dict[str, str]
    ) -> Conversation | None:
        record = self._find(conversation_id, scope)
        if record is None:
            return None
        record.conversation = replace(record.conversation, metadata=dict(metadata))
        return record.conversation

    async def delete(self, conversation_id: str, scope: str) -> bool:
        if self._find(conversation_id, scope) is None:
            return False
        del self._records[conversation_id]
        return True

    async def items(
        self, conversation_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        record = self._find(conversation_id, scope)
        return list(record.items.values()) if record else None

    async def page(
        self,
        conversation_id: str,
        scope: str,
        *,
        limit: int,
        order: Order,
        after: str | None,
    ) -> ItemPage | None:
        record = self._find(conversation_id, scope)
        if record is None:
            return None
        items = list(record.items.values())
        return page_of(items, limit=limit, order=order, after=after)

    async def add_items(
        self,
        conversation_id: str,
        scope: str,
        items: list[dict[str, Any]],
        *,
        response_id: str | None = None,
        holder: str | None = None,
    ) -> bool:
        record = self._find(conversation_id, scope)
        if record is None:
            return False
        if response_id is None:
            if self._held(record):
                raise ConversationLockedError(conversation_id)
            _add(record, items)
            return True
        for item_id in record.turns.pop(response_id, ()):
            record.items.pop(item_id, None)
        record.turns[response_id] = _add(record, items)
        if holder is not None:
            self._end(record, holder)
        return True

    async def begin_turn(
        self,
        conversation_id: str,
        scope: str,
        holder: str,
        *,
        lease: float,
        history: bool = True,
    ) -> list[dict[str, Any]] | None:
        record = self._find(conversation_id, scope)
        if record is None:
            return None
        if self._held(record):
            raise ConversationLockedError(conversation_id)
        record.claim = _Claim(holder, self._clock() + lease)
        return list(record.items.values()) if history else []

    async def renew_turn(
        self, conversation_id: str, holder: str, *, lease: float
    ) -> bool:
        record = self._records.get(conversation_id)
        claim = record.claim if record else None
        if claim is None or claim.holder != holder or claim.expires is None:
            return False
        claim.expires = self._clock() + lease
        return True

    async def end_turn(self, conversation_id: str, holder: str) -> None:
        record = self._records.get(conversation_id)
        if record is not None:
            self._end(record, holder)

    def _held(self, record: _Record) -> bool:
        claim = record.claim
        if claim is None:
            return False
        if claim.expires is not None and claim.expires > self._clock():
            return True
        return self._unfinished(claim.holder)

    @staticmethod
    def _end(record: _Record, holder: str) -> None:
        if record.claim is not None and record.claim.holder == holder:
            record.claim.expires = None

    async def item(
        self, conversation_id: str, item_id: str, scope: str
    ) -> dict[str, Any] | None:
        record = self._find(conversation_id, scope)
        return record.items.get(item_id) if record else None

    async def delete_item(self, conversation_id: str, item_id: str, scope: str) -> bool:
        record = self._find(conversation_id, scope)
        return record is not None and record.items.pop(item_id, None) is not None

    def _find(self, conversation_id: str, scope: str) -> _Record | None:
        record = self._records.get(conversation_id)
        return record if record is not None and record.scope == scope else None


def _add(record: _Record, items: list[dict[str, Any]]) -> list[str]:
    """Add the items not held yet; their ids."""
    added = []
    for item in items:
        if item["id"] not in record.items:
            record.items[item["id"]] = item
            added.append(item["id"])
    return added
