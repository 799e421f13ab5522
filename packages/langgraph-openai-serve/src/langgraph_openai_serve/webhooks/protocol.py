"""``Announce``: how batches and background Responses report that they ended."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Announce = Callable[[Any, str, str, str], Awaitable[None]]
"""Queues an event: ``(transaction, type, object id, scope)``. Producers call
it in the transaction that stores the end (``None`` for memory stores), so
an event exists exactly when the end does."""


async def announce_nothing(
    transaction: Any, event_type: str, object_id: str, scope: str
) -> None:
    """The ``Announce`` of a deployment without webhooks."""
    del transaction, event_type, object_id, scope
