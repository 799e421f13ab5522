"""``ProcrastinateQueue``: the job queue on procrastinate's PostgreSQL tables.

procrastinate is an existing PostgreSQL-backed task queue, so jobs need
nothing beyond the PostgreSQL LGOS already uses. Every registered task's
jobs go on one procrastinate queue (``QUEUE``); API processes defer them,
usually in the transaction that stores what they work on, and ``lgos
worker`` processes (on any number of machines) fetch them with ``SELECT ...
FOR UPDATE SKIP LOCKED``. A job's ``lock`` and ``queueing_lock`` are
procrastinate's own.

No job is lost:

- **Stops.** On SIGTERM or SIGINT a worker takes no new job, gives running
  ones ``shutdown_timeout`` seconds, then cancels the rest; the task's retry
  policy puts each back on the queue at once (``queue_worker.py``).
- **Crashes.** Workers send procrastinate heartbeats. Every worker sweeps, at
  most one at a time (an advisory lock), for ``doing`` jobs whose worker has
  been silent longer than ``stalled_timeout`` (procrastinate's stalled-jobs
  query) and retries them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from langgraph_openai_serve.backends.postgres.fair_fetch import (
    OUTRANKED,
    QUEUE,
    TENANT_ARG,
    fair_parameters,
)
from langgraph_openai_serve.backends.postgres.queue_counts import fold_when_due
from langgraph_openai_serve.backends.postgres.queue_stats import queue_stats
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import (
    Job,
    Priority,
    RetryPolicy,
    Task,
)
from langgraph_openai_serve.observability.queue import QueueStats, rerun
from langgraph_openai_serve.operations.readiness import Check

if TYPE_CHECKING:
    from procrastinate import App, RetryDecision

    from langgraph_openai_serve.backends.postgres.queue_worker import QueueWorker

_SWEEP_LOCK = 0x6C676F735F7377  # pg advisory lock key: one sweeper at a time

logger = logging.getLogger("langgraph_openai_serve")

Connection = Callable[[], Awaitable[Any]]
"""A pooled connection of the backend's pool (``async with``)."""


def _arguments(job: Job) -> dict[str, Any]:
    """The job's arguments as stored: its tenant among them, for the fetch."""
    if job.tenant is None:
        return job.args
    return {**job.args, TENANT_ARG: job.tenant}


def _strategy(policy: RetryPolicy) -> Any:
    """The task's retry policy as procrastinate's retry strategy."""
    from procrastinate import BaseRetryStrategy, RetryDecision

    class Policy(BaseRetryStrategy):
        def get_retry_decision(
            self, *, exception: BaseException, job: Any
        ) -> RetryDecision | None:
            delay = policy(exception, job.attempts, job.task_kwargs)
            if delay is None:
                return None
            return RetryDecision(retry_in={"milliseconds": int(delay * 1000)})

    return Policy()


class ProcrastinateQueue:
    """Defers jobs to procrastinate; its ``worker()`` executes them.

    ``app``: the backend's procrastinate app (its connector opens its own
    pool, to ``conninfo``; its job manager fetches in ``fair``'s order);
    ``connection``: the backend's pool, for the queue's statistics and
    ``outranked``.
    """

    transactional = True

    def __init__(
        self,
        app: App,
        conninfo: str,
        connection: Connection,
        *,
        stalled_timeout: float = 30.0,
        count_reruns: bool = False,
        fair: FairShare | None = None,
    ) -> None:
        self.app = app
        fair = fair or FairShare()
        self._fair = fair_parameters(fair)
        self._reserved = fair.reserved
        self.conninfo = conninfo
        self.stalled_timeout = stalled_timeout
        self.count_reruns = count_reruns
        """Count the stalled jobs this process puts back (metrics are on)."""
        self._connection = connection
        self._deferrers: dict[str, Any] = {}
        self._opened = False
        self._lock = asyncio.Lock()

    def register(self, task: Task) -> None:
        async def run(context: Any, /, **args: Any) -> None:
            args.pop(TENANT_ARG, None)
            attempts = context.job.attempts
            try:
                await task.run(args, attempts)
            except Exception as error:
                if (
                    task.abandoned is None
                    or task.retry(error, attempts, args) is not None
                ):
                    raise
                logger.exception("jobs.abandoned task=%s", task.name)
                await task.abandoned(args)

        self._deferrers[task.name] = self.app.task(
            name=task.name,
            queue=QUEUE,
            pass_context=True,
            retry=_strategy(task.retry),
        )(run)

    async def open(self) -> None:
        """Open the app's pool (deferring and fetching need it); idempotent."""
        if self._opened:
            return
        async with self._lock:
            if not self._opened:
                try:
                    await self.app.open_async()
                except BaseException:
                    # procrastinate keeps the pool that could not be filled
                    # (the database away at start), closed, and would hand
                    # it out from now on: the next open must make a new one.
                    await self.app.close_async()
                    raise
                self._opened = True

    async def close(self) -> None:
        if self._opened:
            await self.app.close_async()
            self._opened = False

    async def defer(self, jobs: Sequence[Job], transaction: Any = None) -> int:
        from procrastinate.exceptions import AlreadyEnqueued

        await self.open()
        queued = 0
        for job in jobs:
            deferrer = self._deferrers[job.task].configure(
                lock=job.lock,
                queueing_lock=job.queueing_lock,
                priority=int(job.priority),
                connection=transaction,
            )
            try:
                if transaction is not None and job.queueing_lock is not None:
                    # A savepoint: a job refused for its queueing lock leaves
                    # the caller's transaction usable.
                    async with transaction.transaction():
                        await deferrer.defer_async(**_arguments(job))
                else:
                    await deferrer.defer_async(**_arguments(job))
            except AlreadyEnqueued:
                continue
            queued += 1
        return queued

    async def _live_jobs(self, task: str, lock: str) -> list[Any]:
        await self.open()
        jobs = await self.app.job_manager.list_jobs_async(
            queue=QUEUE, task=task, lock=lock
        )
        return [job for job in jobs if job.status in ("todo", "doing")]

    async def live(self, task: str, lock: str) -> bool:
        return bool(await self._live_jobs(task, lock))

    async def cancel(self, task: str, lock: str) -> bool:
        live = await self._live_jobs(task, lock)
        stalled: set[int | None] | None = None
        for job in live:
            if job.status == "todo":
                assert job.id is not None
                if await self.app.job_manager.cancel_job_by_id_async(job.id):
                    continue
                return False  # a worker took it meanwhile
            if stalled is None:
                stalled = {
                    stalled_job.id
                    for stalled_job in await self.app.job_manager.get_stalled_jobs(
                        queue=QUEUE,
                        task_name=task,
                        seconds_since_heartbeat=self.stalled_timeout,
                    )
                }
            if job.id not in stalled:
                return False
        return True

    async def outranked(self, priority: Priority, tenant: str | None) -> bool:
        async with await self._connection() as conn:
            cursor = await conn.execute(
                OUTRANKED,
                {"priority": int(priority), "tenant": tenant or "", **self._fair},
            )
            row = await cursor.fetchone()
        return bool(row["outranked"])

    async def stats(self) -> QueueStats:
        async with await self._connection() as conn:
            return await queue_stats(conn)

    def checks(self) -> dict[str, Check]:
        """None of its own: the backend reads the queue's tables on its pool
        (``PostgresBackend.checks``); a worker's readiness is its heartbeat."""
        return {}

    def worker(
        self,
        *,
        concurrency: int,
        shutdown_timeout: float,
        heartbeat_interval: float,
        stalled_check_interval: float,
    ) -> QueueWorker:
        """A worker of this queue (``lgos worker``): ``concurrency`` slots,
        and the fair share's reserved ones for the top class."""
        from langgraph_openai_serve.backends.postgres.fair_fetch import (
            FairJobManager,
        )
        from langgraph_openai_serve.backends.postgres.queue_worker import QueueWorker

        manager = self.app.job_manager
        if self._reserved and isinstance(manager, FairJobManager):
            manager.regular_slots = concurrency
            concurrency += self._reserved
        return QueueWorker(
            self.app,
            QUEUE,
            self.retry_stalled_jobs,
            self.open,
            concurrency=concurrency,
            shutdown_timeout=shutdown_timeout,
            heartbeat_interval=heartbeat_interval,
            stalled_timeout=self.stalled_timeout,
            stalled_check_interval=stalled_check_interval,
        )

    async def retry_stalled_jobs(self) -> list[int]:
        """Put back on the queue the jobs of workers silent for longer than
        ``stalled_timeout``; the ids of the jobs retried."""
        import psycopg

        async with await psycopg.AsyncConnection.connect(
            self.conninfo, autocommit=True
        ) as conn:
            cursor = await conn.execute(
                "SELECT pg_try_advisory_lock(%s)", (_SWEEP_LOCK,)
            )
            row = await cursor.fetchone()
            if row is None or not row[0]:
                return []  # another worker is sweeping
            # Listing and retrying under the lock: a job another sweeper
            # already retried (and a live worker took) is never listed here.
            stalled = await self.app.job_manager.get_stalled_jobs(
                queue=QUEUE, seconds_since_heartbeat=self.stalled_timeout
            )
            retried = []
            for job in stalled:
                await self.app.job_manager.retry_job(job)
                assert job.id is not None
                retried.append(job.id)
                logger.warning(
                    "background.stalled_job_retried job=%s task=%s args=%s",
                    job.id,
                    job.task_name,
                    job.task_kwargs,
                )
            if retried and self.count_reruns:
                rerun("stalled", len(retried))
            # The sweeper also folds the queue's noted counts, which would
            # otherwise grow until a metrics scrape folds them (none before
            # ``lgos db-setup`` put them in place). Counted first: a fold
            # that meets an outage fails this sweep (the next one folds),
            # not the record of the jobs it retried.
            with contextlib.suppress(psycopg.errors.UndefinedTable):
                await fold_when_due(conn)
            # Closing the connection releases the advisory lock.
        return retried
