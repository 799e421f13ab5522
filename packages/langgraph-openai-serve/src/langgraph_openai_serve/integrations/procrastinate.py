"""``ProcrastinateBackend``: background jobs on procrastinate's PostgreSQL queue.

procrastinate is an existing PostgreSQL-backed task queue, so background runs
need nothing beyond the PostgreSQL LGOS already uses. API processes defer one
job per Response; ``lgos worker`` processes (on any number of machines) fetch
jobs with ``SELECT ... FOR UPDATE SKIP LOCKED``, so each runs once. Jobs are
never retried: a run that raises fails its Response. A worker watches the
store's cancel flag and cancels the run's task when it is set.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from langgraph_openai_serve.background.protocol import (
    BackgroundJob,
    Executor,
    ResponseStore,
)

TASK_NAME = "lgos.run_background_response"
QUEUE = "lgos_background"


class ProcrastinateBackend:
    """Defers jobs to procrastinate; ``run_worker`` executes them."""

    def __init__(
        self,
        conninfo: str,
        store: ResponseStore,
        *,
        cancel_poll_interval: float = 0.25,
    ) -> None:
        import procrastinate

        self.store = store
        self.conninfo = conninfo
        self.cancel_poll_interval = cancel_poll_interval
        self.app = procrastinate.App(
            connector=procrastinate.PsycopgConnector(conninfo=conninfo),
        )
        self._executor: Executor | None = None
        self._opened = False

        @self.app.task(name=TASK_NAME, queue=QUEUE, pass_context=False)
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

    async def _open(self) -> None:
        if not self._opened:
            await self.app.open_async()
            self._opened = True

    async def stop(self) -> None:
        if self._opened:
            await self.app.close_async()
            self._opened = False

    async def submit(self, job: BackgroundJob) -> None:
        await self._task.defer_async(response_id=job.response_id)

    async def cancel(self, response_id: str) -> None:
        """Nothing to do here: the worker running it polls the cancel flag."""

    async def run_worker(self, executor: Executor, *, concurrency: int = 4) -> None:
        """Execute jobs until cancelled (``lgos worker``)."""
        await self.start(executor)
        await self.app.run_worker_async(
            queues=[QUEUE],
            concurrency=concurrency,
            install_signal_handlers=False,
            delete_jobs="successful",
        )

    async def _run(self, response_id: str) -> None:
        if self._executor is None:
            raise RuntimeError("the worker was not started with an executor")
        job = await self.store.job(response_id)
        if job is None:
            return
        run: asyncio.Task[None] = asyncio.create_task(self._executor(job))
        watcher = asyncio.create_task(self._watch_cancel(response_id, run))
        try:
            await run
        except asyncio.CancelledError:
            if not run.cancelled():
                raise
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch_cancel(self, response_id: str, run: asyncio.Task[Any]) -> None:
        while not run.done():
            if await self.store.cancel_requested(response_id):
                run.cancel()
                return
            await asyncio.sleep(self.cancel_poll_interval)
