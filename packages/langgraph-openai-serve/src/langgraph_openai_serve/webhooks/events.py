"""The event payload, as OpenAI sends it, and the endpoints that get it."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

EVENT_TYPES = frozenset(
    {
        "response.completed",
        "response.failed",
        "response.cancelled",
        "response.incomplete",
        "batch.completed",
        "batch.failed",
        "batch.cancelled",
        "batch.expired",
    }
)


def event_payload(event_type: str, object_id: str) -> dict[str, Any]:
    """``{object: "event", id, type, created_at, data: {id}}``."""
    return {
        "object": "event",
        "id": f"evt_{secrets.token_hex(16)}",
        "type": event_type,
        "created_at": int(time.time()),
        "data": {"id": object_id},
    }


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str
    scopes: frozenset[str]
    """The tenants whose events it receives (``*``: every tenant)."""
    events: frozenset[str]
    """The event types it receives (all when configured without)."""

    def receives(self, event_type: str, scope: str) -> bool:
        tenants = "*" in self.scopes or scope in self.scopes
        return tenants and event_type in self.events
