"""Deliveries as jobs of the deployment's queue, retried until their deadline.

Each delivery is a job of ``TASK_NAME``, deferred in the transaction that
stores what ended (on PostgreSQL), so a crash can lose neither. A failed
attempt raises; the retry policy puts the job back after 1, 2, 4, ...
seconds (capped at an hour) until ``retry_for`` seconds after the event;
the job's arguments keep the event's id, so every attempt sends the same
``webhook-id``. A worker lost mid-delivery is swept like any job and the
delivery runs again: receivers de-duplicate by ``webhook-id``. On the
in-process queue the same happens in this process, and is lost with it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from langgraph_openai_serve.jobs.protocol import Job, JobArgs, JobQueue, Task
from langgraph_openai_serve.webhooks.delivery import Deliverer, backoff, describe
from langgraph_openai_serve.webhooks.service import Delivery

logger = logging.getLogger("langgraph_openai_serve")

TASK_NAME = "lgos.deliver_webhook"


class QueuedSender:
    """A ``Sender`` whose deliveries are jobs of ``jobs`` (it registers
    their task there)."""

    def __init__(self, jobs: JobQueue, deliverer: Deliverer, retry_for: float) -> None:
        self._jobs = jobs
        self._deliverer = deliverer
        jobs.register(delivery_task(deliverer, retry_for))

    async def enqueue(self, deliveries: Sequence[Delivery], transaction: Any) -> None:
        if deliveries:
            await self._jobs.defer(
                [Job(TASK_NAME, delivery.as_job()) for delivery in deliveries],
                transaction,
            )

    async def stop(self) -> None:
        await self._deliverer.close()


def delivery_task(deliverer: Deliverer, retry_for: float) -> Task:
    """One signed POST per attempt, retried with back-off until the event is
    ``retry_for`` seconds old."""

    async def deliver(args: JobArgs, attempts: int) -> None:
        del attempts
        if not deliverer.knows(args["url"]):
            # Its endpoint was removed from the configuration since: no
            # secret signs it any more, and nobody expects it.
            logger.warning("webhook.dropped %s: no longer configured", describe(args))
            return
        await deliverer.send(args["url"], args["webhook_id"], args["body"])

    def retry(error: BaseException, attempts: int, args: JobArgs) -> float | None:
        wait = (
            0.0 if isinstance(error, asyncio.CancelledError) else backoff(attempts + 1)
        )
        if time.time() + wait > float(args["created_at"]) + retry_for:
            return None
        return wait

    return Task(TASK_NAME, deliver, retry)
