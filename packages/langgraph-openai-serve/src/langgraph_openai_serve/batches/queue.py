"""``ProcrastinateBatchQueue``: batch steps on the background queue.

Steps are jobs of one task on the queue ``lgos worker`` drains, beside
background Responses, so the workers there are the batch's workers, and the
stalled-job sweep that re-runs a dead worker's Responses re-runs its steps
too. A step's ``lock`` keeps two runs of one chunk (or a batch's validate
and finalize) from overlapping. A step stopped by its worker's shutdown goes
back to the queue at once; one that raised is retried with back-off, and
after ``MAX_ATTEMPTS`` its batch fails.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langgraph_openai_serve.background.postgres.queue import QUEUE, ProcrastinateBackend
from langgraph_openai_serve.batches.protocol import BatchStep

TASK_NAME = "lgos.run_batch_step"
MAX_ATTEMPTS = 6

logger = logging.getLogger("langgraph_openai_serve")


def _retry_strategy() -> Any:
    from procrastinate import BaseRetryStrategy, RetryDecision

    class StepRetry(BaseRetryStrategy):
        def get_retry_decision(
            self, *, exception: BaseException, job: Any
        ) -> RetryDecision | None:
            if isinstance(exception, asyncio.CancelledError):
                return RetryDecision(retry_in={"seconds": 0})
            if job.attempts + 1 >= MAX_ATTEMPTS:
                return None
            return RetryDecision(retry_in={"seconds": 2**job.attempts})

    return StepRetry()


class ProcrastinateBatchQueue:
    """Defers steps to the background backend's procrastinate app."""

    transactional = True

    def __init__(
        self,
        backend: ProcrastinateBackend,
        give_up: Callable[[BatchStep], Awaitable[None]],
    ) -> None:
        self._backend = backend
        self._give_up = give_up
        self._handler: Callable[[BatchStep], Awaitable[None]] | None = None

        @backend.app.task(
            name=TASK_NAME,
            queue=QUEUE,
            pass_context=True,
            retry=_retry_strategy(),
        )
        async def run_batch_step(
            context: Any, kind: str, batch_id: str, chunk: int
        ) -> None:
            step = BatchStep(kind, batch_id, chunk)  # type: ignore[arg-type]
            await self._run(step, context.job.attempts)

        self._task = run_batch_step

    async def start(self, handler: Callable[[BatchStep], Awaitable[None]]) -> None:
        self._handler = handler
        await self._backend.open()

    async def stop(self) -> None:
        """Nothing: the background backend owns the app."""

    async def defer(self, steps: Sequence[BatchStep], transaction: Any = None) -> None:
        from procrastinate.exceptions import AlreadyEnqueued

        for step in steps:
            deferrer = self._task.configure(
                lock=step.lock,
                queueing_lock=f"{step.kind}:{step.lock}",
                connection=transaction,
            )
            try:
                if transaction is None:
                    await deferrer.defer_async(
                        kind=step.kind, batch_id=step.batch_id, chunk=step.chunk
                    )
                    continue
                async with transaction.transaction():  # a savepoint
                    await deferrer.defer_async(
                        kind=step.kind, batch_id=step.batch_id, chunk=step.chunk
                    )
            except AlreadyEnqueued:
                pass  # the same step waits in the queue already

    async def _run(self, step: BatchStep, attempts: int) -> None:
        if self._handler is None:
            raise RuntimeError("the worker did not start the batch queue")
        try:
            await self._handler(step)
        except Exception:
            if attempts + 1 < MAX_ATTEMPTS:
                raise
            logger.exception("batch.step_abandoned step=%s", step)
            await self._give_up(step)
