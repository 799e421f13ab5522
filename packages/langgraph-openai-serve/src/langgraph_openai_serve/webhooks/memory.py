"""Deliveries as tasks of this process (the memory backend): retried with
back-off for ``retry_for`` seconds, lost with the process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any

from langgraph_openai_serve.webhooks.delivery import Deliverer, DeliveryFailed, backoff
from langgraph_openai_serve.webhooks.service import Delivery

logger = logging.getLogger("langgraph_openai_serve")


class InProcessSender:
    def __init__(self, deliverer: Deliverer, retry_for: float) -> None:
        self._deliverer = deliverer
        self._retry_for = retry_for
        self._tasks: set[asyncio.Task[None]] = set()

    async def enqueue(self, deliveries: Sequence[Delivery], transaction: Any) -> None:
        del transaction
        for delivery in deliveries:
            task = asyncio.create_task(self._deliver(delivery))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _deliver(self, delivery: Delivery) -> None:
        attempt = 0
        while True:
            try:
                await self._deliverer.send(
                    delivery.url, delivery.webhook_id, delivery.body
                )
                return
            except DeliveryFailed as exc:
                attempt += 1
                wait = backoff(attempt)
                if time.time() + wait > delivery.created_at + self._retry_for:
                    logger.error("webhook.abandoned %s: %s", delivery.webhook_id, exc)
                    return
                logger.warning(
                    "webhook.retry %s in %ss: %s", delivery.webhook_id, wait, exc
                )
                await asyncio.sleep(wait)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._deliverer.close()
