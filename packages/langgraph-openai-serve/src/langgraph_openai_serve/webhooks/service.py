"""``Webhooks``: the deployment's ``Announce``, from event to deliveries."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langgraph_openai_serve.webhooks.events import Endpoint, event_payload

logger = logging.getLogger("langgraph_openai_serve")

_dumps = json.JSONEncoder(separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event for one endpoint: what every attempt sends."""

    url: str
    webhook_id: str
    type: str
    body: str
    created_at: float
    """When the event happened: retries stop ``retry_for`` seconds later."""

    def as_job(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "webhook_id": self.webhook_id,
            "type": self.type,
            "body": self.body,
            "created_at": self.created_at,
        }


class Sender(Protocol):
    async def enqueue(self, deliveries: Sequence[Delivery], transaction: Any) -> None:
        """Queue the deliveries (inside ``transaction`` when given)."""
        ...

    async def stop(self) -> None: ...


class Webhooks:
    def __init__(self, endpoints: Sequence[Endpoint], sender: Sender) -> None:
        self.endpoints = tuple(endpoints)
        self.sender = sender

    async def announce(
        self, transaction: Any, event_type: str, object_id: str, scope: str
    ) -> None:
        """Queue ``event_type`` of ``object_id`` for every endpoint that
        receives that type from the tenant ``scope``."""
        targets = [e for e in self.endpoints if e.receives(event_type, scope)]
        if not targets:
            return
        payload = event_payload(event_type, object_id)
        body = _dumps(payload)
        now = time.time()
        deliveries = [
            Delivery(endpoint.url, payload["id"], event_type, body, now)
            for endpoint in targets
        ]
        await self.sender.enqueue(deliveries, transaction)
