"""Deliveries as jobs of the PostgreSQL queue: durable and retried.

Each delivery is a job of the queue ``lgos worker`` drains, deferred in the
transaction that stores what ended, so a crash can lose neither. A failed
attempt raises; the retry strategy puts the job back after 1, 2, 4, ...
seconds (capped at an hour) until ``retry_for`` seconds after the event;
the job's kwargs keep the event's id, so every attempt sends the same
``webhook-id``. A worker lost mid-delivery is swept like any job and the
delivery runs again: receivers de-duplicate by ``webhook-id``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from langgraph_openai_serve.background.postgres.queue import QUEUE, ProcrastinateBackend
from langgraph_openai_serve.webhooks.delivery import Deliverer, backoff
from langgraph_openai_serve.webhooks.service import Delivery

TASK_NAME = "lgos.deliver_webhook"


def _retry_strategy(retry_for: float) -> Any:
    from procrastinate import BaseRetryStrategy, RetryDecision

    class UntilDeadline(BaseRetryStrategy):
        def get_retry_decision(
            self, *, exception: BaseException, job: Any
        ) -> RetryDecision | None:
            wait = 0 if _is_cancel(exception) else int(backoff(job.attempts + 1))
            deadline = float(job.task_kwargs["created_at"]) + retry_for
            if time.time() + wait > deadline:
                return None
            return RetryDecision(retry_in={"seconds": int(wait)})

    return UntilDeadline()


def _is_cancel(exception: BaseException) -> bool:
    import asyncio

    return isinstance(exception, asyncio.CancelledError)


class ProcrastinateSender:
    transactional = True

    def __init__(
        self, backend: ProcrastinateBackend, deliverer: Deliverer, retry_for: float
    ) -> None:
        self._backend = backend
        self._deliverer = deliverer

        @backend.app.task(
            name=TASK_NAME,
            queue=QUEUE,
            pass_context=False,
            retry=_retry_strategy(retry_for),
        )
        async def deliver_webhook(
            url: str, webhook_id: str, type: str, body: str, created_at: float
        ) -> None:
            del type, created_at
            await self._deliverer.send(url, webhook_id, body)

        self._task = deliver_webhook

    async def enqueue(self, deliveries: Sequence[Delivery], transaction: Any) -> None:
        if not deliveries:
            return
        await self._backend.open()
        for delivery in deliveries:
            deferrer = self._task.configure(connection=transaction)
            await deferrer.defer_async(**delivery.as_job())

    async def stop(self) -> None:
        await self._deliverer.close()
