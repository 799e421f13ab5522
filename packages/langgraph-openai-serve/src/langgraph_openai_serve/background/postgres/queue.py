"""``ProcrastinateBackend``: background jobs on procrastinate's PostgreSQL queue.

procrastinate is an existing PostgreSQL-backed task queue, so background runs
need nothing beyond the PostgreSQL LGOS already uses. API processes defer one
job per Response, in the transaction that stores the Response; ``lgos worker``
processes (on any number of machines) fetch jobs with ``SELECT ... FOR UPDATE
SKIP LOCKED``. A job's ``lock`` is its Response id, so two runs of one
Response never overlap. A worker watches the store's cancel flag and cancels
the run's task when it is set.

No run is lost:

- **Stops.** On SIGTERM or SIGINT a worker takes no new job, gives running
  ones ``shutdown_timeout`` seconds, then cancels the rest; the executor hands
  each back (the Response is ``queued`` again) and the job's retry strategy
  puts it back on the queue at once.
- **Crashes.** Workers send procrastinate heartbeats. Every worker sweeps, at
  most one at a time (an advisory lock), for ``doing`` jobs whose worker has
  been silent longer than ``stalled_timeout`` (procrastinate's stalled-jobs
  query) and retries them; the executor counts such losses and fails the
  Response after ``max_attempts`` runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from langgraph_openai_serve.background.protocol import (
    BackgroundJob,
    Executor,
    ResponseStore,
)
from langgraph_openai_serve.observability.queue import QueueStats, rerun
from langgraph_openai_serve.operations.readiness import NotReady

if TYPE_CHECKING:
    from langgraph_openai_serve.background.postgres.queue_worker import QueueWorker

TASK_NAME = "lgos.run_background_response"
QUEUE = "lgos_background"
_SWEEP_LOCK = 0x6C676F735F7377  # pg advisory lock key: one sweeper at a time

logger = logging.getLogger("langgraph_openai_serve")

# A job is ready from when it was deferred, handed back (deferred for retry)
# or retried, or from its scheduled time when that is later.
_QUEUE_STATS = """
SELECT
    count(*) FILTER (WHERE ready) AS ready,
    count(*) FILTER (WHERE status = 'doing') AS running,
    extract(epoch FROM now() - min(since) FILTER (WHERE ready))::float8 AS oldest
FROM (
    SELECT j.status,
        j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
            AS ready,
        greatest(j.scheduled_at, (
            SELECT max(e.at) FROM procrastinate_events e
            WHERE e.job_id = j.id
              AND e.type IN ('deferred', 'deferred_for_retry', 'retried')
        )) AS since
    FROM procrastinate_jobs j
    WHERE j.queue_name = %s AND j.status IN ('todo', 'doing')
) jobs
"""


def _retry_strategy() -> Any:
    from procrastinate import BaseRetryStrategy, RetryDecision

    class HandBack(BaseRetryStrategy):
        """Re-queue a job its worker stopped (cancelled) or that broke
        outside the graph (the store or the network failed); the executor
        bounds how often a run may be lost."""

        def get_retry_decision(
            self, *, exception: BaseException, job: Any
        ) -> RetryDecision | None:
            del job
            if isinstance(exception, asyncio.CancelledError):
                return RetryDecision(retry_in={"seconds": 0})
            return RetryDecision(retry_in={"seconds": 1})

    return HandBack()


class ProcrastinateBackend:
    """Defers jobs to procrastinate; its ``worker()`` executes them."""

    def __init__(
        self,
        conninfo: str,
        store: ResponseStore,
        *,
        cancel_poll_interval: float = 0.25,
        stalled_timeout: float = 30.0,
        count_reruns: bool = False,
    ) -> None:
        import procrastinate

        self.count_reruns = count_reruns
        """Count the stalled jobs this process puts back (metrics are on)."""
        self.store = store
        self.conninfo = conninfo
        self.cancel_poll_interval = cancel_poll_interval
        self.stalled_timeout = stalled_timeout
        self.app = procrastinate.App(
            connector=procrastinate.PsycopgConnector(conninfo=conninfo),
        )
        self._executor: Executor | None = None
        self._opened = False

        @self.app.task(
            name=TASK_NAME, queue=QUEUE, pass_context=False, retry=_retry_strategy()
        )
        async def run_background_response(response_id: str) -> None:
            await self._run(response_id)

        self._task = run_background_response

    async def setup(self) -> None:
        """Apply procrastinate's schema unless it exists (before workers start)."""
        import psycopg

        async with await psycopg.AsyncConnection.connect(
            self.conninfo, autocommit=True
        ) as conn:
            cursor = await conn.execute("SELECT to_regclass('procrastinate_jobs')")
            row = await cursor.fetchone()
        if row is not None and row[0] is not None:
            return
        await self._open()
        await self.app.schema_manager.apply_schema_async()

    async def start(self, executor: Executor) -> None:
        self._executor = executor
        await self._open()

    async def check(self) -> None:
        """Readiness: the queue's database answers and has its tables."""
        await self._open()
        if not await self.app.check_connection_async():
            raise NotReady("the queue's tables are missing: run lgos db-setup")

    async def open(self) -> None:
        """Open the app so jobs can be deferred (other tasks on its queue,
        such as batch steps, defer through it)."""
        await self._open()

    async def _open(self) -> None:
        if not self._opened:
            await self.app.open_async()
            self._opened = True

    async def stop(self) -> None:
        if self._opened:
            await self.app.close_async()
            self._opened = False

    def _deferrer(self, response_id: str, transaction: Any = None) -> Any:
        return self._task.configure(
            lock=response_id, queueing_lock=response_id, connection=transaction
        )

    async def submit(self, job: BackgroundJob, transaction: Any = None) -> None:
        await self._deferrer(job.response_id, transaction).defer_async(
            response_id=job.response_id
        )

    async def resubmit_if_missing(self, job: BackgroundJob) -> bool:
        from procrastinate.exceptions import AlreadyEnqueued

        if await self._live_jobs(job.response_id):
            return False
        try:
            await self.submit(job)
        except AlreadyEnqueued:
            return False  # a concurrent retry queued it first
        logger.warning("background.requeued_missing_job response=%s", job.response_id)
        return True

    async def _live_jobs(self, response_id: str) -> list[Any]:
        jobs = await self.app.job_manager.list_jobs_async(
            queue=QUEUE, task=TASK_NAME, lock=response_id
        )
        return [job for job in jobs if job.status in ("todo", "doing")]

    async def cancel(self, response_id: str) -> bool:
        """Cancel a waiting job; report whether a live worker runs it."""
        live = await self._live_jobs(response_id)
        if not live:
            return True
        stalled: set[int | None] | None = None
        for job in live:
            if job.status == "todo":
                assert job.id is not None
                if await self.app.job_manager.cancel_job_by_id_async(job.id):
                    continue
                return False  # a worker took it meanwhile: it sees the flag
            if stalled is None:
                stalled = {
                    stalled_job.id
                    for stalled_job in await self.app.job_manager.get_stalled_jobs(
                        queue=QUEUE,
                        task_name=TASK_NAME,
                        seconds_since_heartbeat=self.stalled_timeout,
                    )
                }
            if job.id not in stalled:
                return False
        return True

    def worker(
        self,
        *,
        concurrency: int = 4,
        shutdown_timeout: float = 25.0,
        heartbeat_interval: float = 5.0,
        stalled_check_interval: float = 10.0,
    ) -> QueueWorker:
        """A worker of this queue (``lgos worker``); ``start`` the backend
        with the executor before running it."""
        from langgraph_openai_serve.background.postgres.queue_worker import (
            QueueWorker,
        )

        return QueueWorker(
            self,
            concurrency=concurrency,
            shutdown_timeout=shutdown_timeout,
            heartbeat_interval=heartbeat_interval,
            stalled_check_interval=stalled_check_interval,
        )

    async def sweep_forever(self, interval: float) -> None:
        """Retry stalled jobs every ``interval`` seconds until cancelled."""
        while True:
            try:
                await self.retry_stalled_jobs()
            except Exception:
                logger.exception("background.stalled_sweep_failed")
            await asyncio.sleep(interval)

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
            # Every task of the queue: batch steps run here too.
            stalled = await self.app.job_manager.get_stalled_jobs(
                queue=QUEUE,
                seconds_since_heartbeat=self.stalled_timeout,
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
            # Closing the connection releases the advisory lock.
        if retried and self.count_reruns:
            rerun("stalled", len(retried))
        return retried

    async def queue_stats(self) -> QueueStats:
        """Waiting (due now) and running jobs of the LGOS queue, and how long
        the oldest waiting one has waited since it was (re)queued."""
        async with await self.store.connection() as conn:  # type: ignore[attr-defined]
            cursor = await conn.execute(_QUEUE_STATS, (QUEUE,))
            row = await cursor.fetchone()
        return QueueStats(row["ready"], row["running"], row["oldest"] or 0.0)

    async def _run(self, response_id: str) -> None:
        if self._executor is None:
            raise RuntimeError("the worker was not started with an executor")
        run: asyncio.Task[None] = asyncio.create_task(self._executor(response_id))
        watcher: asyncio.Task[bool] = asyncio.create_task(
            self._watch_cancel(response_id, run)
        )
        try:
            await run
        except asyncio.CancelledError:
            # Only the watcher's own cancel ends the job here. A watcher that
            # merely ended (it saw the run done, possibly before this task
            # resumed) says nothing: the worker is stopping, and the job must
            # go back to the queue, or its handed-back Response never runs.
            if not _cancelled_for_the_client(watcher):
                raise
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch_cancel(self, response_id: str, run: asyncio.Task[Any]) -> bool:
        """Cancel ``run`` once its client asks to; whether it did. The run
        itself reads the flag as it starts, so the first look is one
        interval later, not beside the run's own first statements."""
        while not run.done():
            await asyncio.sleep(self.cancel_poll_interval)
            if not run.done() and await self.store.cancel_requested(response_id):
                run.cancel()
                return True
        return False


def _cancelled_for_the_client(watcher: asyncio.Task[bool]) -> bool:
    """The watcher ended by cancelling the run for its client."""
    return (
        watcher.done()
        and not watcher.cancelled()
        and watcher.exception() is None
        and watcher.result()
    )
