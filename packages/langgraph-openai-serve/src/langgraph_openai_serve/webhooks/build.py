"""The webhooks the settings describe, built when a server binds."""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.settings import Settings
from langgraph_openai_serve.webhooks.delivery import Deliverer
from langgraph_openai_serve.webhooks.events import EVENT_TYPES, Endpoint
from langgraph_openai_serve.webhooks.memory import InProcessSender
from langgraph_openai_serve.webhooks.service import Sender, Webhooks


def webhooks_for(settings: Settings, background: Any = None) -> Webhooks | None:
    """``None`` without ``LGOS_WEBHOOK_ENDPOINTS``; deliveries go on the
    PostgreSQL queue when the background backend is procrastinate's."""
    if not settings.WEBHOOK_ENDPOINTS or settings.WEBHOOK_SECRET is None:
        return None
    deliverer = Deliverer(
        settings.WEBHOOK_SECRET.get_secret_value(), settings.WEBHOOK_TIMEOUT
    )
    retry_for = settings.WEBHOOK_RETRY_FOR.total_seconds()
    sender: Sender = InProcessSender(deliverer, retry_for)
    if background is not None:
        from langgraph_openai_serve.background.postgres.queue import (
            ProcrastinateBackend,
        )

        if isinstance(background.backend, ProcrastinateBackend):
            from langgraph_openai_serve.webhooks.queue import ProcrastinateSender

            sender = ProcrastinateSender(background.backend, deliverer, retry_for)
    endpoints = [
        Endpoint(
            url=endpoint.url,
            scopes=frozenset(endpoint.scopes),
            events=frozenset(endpoint.events or EVENT_TYPES),
        )
        for endpoint in settings.WEBHOOK_ENDPOINTS
    ]
    return Webhooks(endpoints, sender)
