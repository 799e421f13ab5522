"""One ``lgos worker``'s run of the procrastinate queue, and its health.

``QueueWorker`` runs procrastinate's worker and the stalled-job sweeper
until ``stop()`` (the process's signal handler calls it); ``check()`` is
the worker's readiness: registered in the queue and heartbeating, as the
other workers see it (a heartbeat older than the stalled timeout makes them
run its jobs again).

procrastinate stops its worker when the database breaks the heartbeat or
the listener (a restart, a connection refused for longer than its pool
waits). The process does not stop with it: the loop waits until the
database answers, then starts a new worker, which registers again and takes
jobs, the handed-back ones first among them. A worker started while the
database is away waits for it the same way (not ready meanwhile), so an
orchestrator that starts pods during an outage does not see them crash.

procrastinate's LISTEN for new jobs is one of its worker's side tasks, and
procrastinate stops watching them as soon as the first one ends, which its
periodic deferrer does at once when no periodic task is registered: a
listener the database broke later was never noticed, and the worker went
on by polling every 5 s. ``_Worker`` watches its side tasks for as long as
it runs: a listener that ended is listened again (with a growing delay
while the database is away) and the worker looks for jobs at once, since
what was notified meanwhile is gone; any other side task that fails stops
the worker, as procrastinate means it to, and the loop above starts over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from procrastinate.worker import Worker

from langgraph_openai_serve.observability.queue import worker_restarted
from langgraph_openai_serve.operations.outages import database_fault
from langgraph_openai_serve.operations.readiness import NotReady

if TYPE_CHECKING:
    from procrastinate import App

logger = logging.getLogger("langgraph_openai_serve")

_HEARTBEAT_AGE = (
    "SELECT extract(epoch FROM now() - last_heartbeat) AS age "
    "FROM procrastinate_workers WHERE id = %(worker_id)s"
)


class QueueWorker:
    """Executes jobs of ``app``'s ``queue`` from ``run()`` until ``stop()``;
    ``sweep`` retries the jobs of stalled workers and ``opening`` opens the
    app (``ProcrastinateQueue``)."""

    def __init__(
        self,
        app: App,
        queue: str,
        sweep: Callable[[], Awaitable[Any]],
        opening: Callable[[], Awaitable[None]],
        *,
        concurrency: int,
        shutdown_timeout: float,
        heartbeat_interval: float,
        stalled_timeout: float,
        stalled_check_interval: float,
    ) -> None:
        self.app = app
        self.stalled_timeout = stalled_timeout
        self.stalled_check_interval = stalled_check_interval
        self.heartbeat_interval = heartbeat_interval
        self._sweep = sweep
        self._opening = opening

        def new_worker() -> Worker:
            return _Worker(
                app=app,
                queues=[queue],
                concurrency=concurrency,
                # The process handles SIGTERM and SIGINT itself (``stop``), so
                # it can turn not-ready before the worker stops taking jobs.
                install_signal_handlers=False,
                shutdown_graceful_timeout=shutdown_timeout,
                update_heartbeat_interval=heartbeat_interval,
                stalled_worker_timeout=stalled_timeout,
                delete_jobs="successful",
            )

        self._new_worker = new_worker
        self._worker = new_worker()
        self._stop_requested = False
        self._stopping = asyncio.Event()
        self.restarts = 0
        """Times the loop started procrastinate's worker again after the
        database took it down."""

    async def run(self) -> None:
        """Take and run jobs until ``stop()``; then finish or hand back the
        running ones within the shutdown timeout, and return."""
        await self._open_when_database_answers()
        if self._stop_requested:
            return
        helpers = [
            asyncio.create_task(self._sweep_forever()),
            asyncio.create_task(self._heartbeat_while_stopping()),
        ]
        try:
            while not self._stop_requested:
                await self._run_once()
                if self._stop_requested:
                    break
                # procrastinate stops its worker when the database broke its
                # heartbeat or its listener: take jobs again once it is back.
                await self._database_back()
                self._worker = self._new_worker()
                self.restarts += 1
                worker_restarted()
                logger.warning("background.worker_restarted restarts=%d", self.restarts)
        finally:
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    async def _open_when_database_answers(self) -> None:
        """Open the app, waiting for a database that is away at start."""
        delay = 0.2
        while not self._stop_requested:
            try:
                await self._opening()
                return
            except Exception as error:
                if database_fault(error) is None:
                    raise
                logger.warning(
                    "background.worker_waits_for_database retry_in=%.1fs: %s",
                    delay,
                    error,
                )
            await self._stopped_within(delay)
            delay = min(delay * 2, 5.0)

    async def _stopped_within(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when a stop comes."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)

    async def _run_once(self) -> None:
        try:
            await self._worker.run()  # type: ignore[no-untyped-call]
        except Exception as error:
            if database_fault(error) is None:
                raise
            logger.warning("background.worker_lost_database: %s", error)

    async def _database_back(self) -> None:
        """Return once the queue's database answers again (or a stop came)."""
        delay = 0.2
        while not self._stop_requested:
            try:
                if await self.app.check_connection_async():
                    return
            except Exception as error:
                if database_fault(error) is None:
                    raise
            await self._stopped_within(delay)
            delay = min(delay * 2, 5.0)

    async def _sweep_forever(self) -> None:
        """Retry stalled jobs every ``stalled_check_interval`` seconds."""
        while True:
            try:
                await self._sweep()
            except Exception as error:
                if database_fault(error) is None:
                    logger.exception("background.stalled_sweep_failed")
                else:  # the next sweep tries again; no traceback for an outage
                    logger.warning("background.stalled_sweep_waits: %s", error)
            await asyncio.sleep(self.stalled_check_interval)

    def stop(self) -> None:
        """Take no new job; ``run()`` returns once running ones are settled."""
        self._stop_requested = True
        self._stopping.set()
        self._worker.stop()  # type: ignore[no-untyped-call]

    async def _heartbeat_while_stopping(self) -> None:
        """procrastinate stops heartbeating as soon as its worker stops, but
        the jobs it runs get the whole shutdown timeout to finish: past the
        stalled timeout the other workers would count it as dead and run
        them a second time, beside it. So the heartbeat goes on here until
        the worker unregisters."""
        await self._stopping.wait()
        while True:
            worker_id = self._worker.worker_id
            if worker_id is not None:
                try:
                    await self.app.job_manager.update_heartbeat(worker_id)
                except Exception:
                    logger.exception("background.stopping_heartbeat_failed")
            await asyncio.sleep(self.heartbeat_interval)

    async def check(self) -> None:
        """Raise ``NotReady`` unless registered and heartbeating."""
        worker_id = self._worker.worker_id
        if worker_id is None:
            raise NotReady("not registered in the queue")
        rows: list[Any] = await self.app.connector.execute_query_all_async(
            _HEARTBEAT_AGE, worker_id=worker_id
        )
        if not rows:
            raise NotReady(
                f"worker {worker_id} is no longer registered (another worker "
                "counted it as stalled)"
            )
        age = float(rows[0]["age"])
        if age > self.stalled_timeout:
            raise NotReady(
                f"last heartbeat {age:.1f} s ago, past the stalled timeout of "
                f"{self.stalled_timeout:g} s"
            )


LISTEN_RETRY_SECONDS = (0.2, 1.0)
"""A listener that ended is listened again after the first delay, doubling
up to the second while it keeps failing. The second bounds how long new
jobs wait for a worker once the database is back (a worker whose look for
jobs met the outage looks again when it listens again, or at its 5 s poll):
with 5 s, a PostgreSQL restart of half a second kept new runs waiting 3 s
(``lgos-bench outage``); a connection try a second per worker while the
database is away costs it little."""


class _Worker(Worker):
    """procrastinate's worker, watching its side tasks while it runs, and
    looking for a job again whenever one ends."""

    async def _process_job(self, context: Any) -> None:
        try:
            await super()._process_job(context)
        finally:
            # Its end may let a waiting job in (a lock it held, a slot below
            # the top class) that no notification announces: procrastinate
            # would take it at its next poll, seconds later.
            self._new_job_event.set()

    async def _fetch_and_process_jobs(self) -> None:
        try:
            await super()._fetch_and_process_jobs()  # type: ignore[no-untyped-call]
        except Exception as error:
            if database_fault(error) is None:
                raise
            # A look for jobs that met the database away (a job that just
            # ended asks for one at once) is not the worker's end: it looks
            # again at the next notification or poll. Whether the worker
            # starts over is its heartbeat's call, as before.
            logger.warning(
                "background.fetch_failed retry_in=%gs: %s",
                self.fetch_job_polling_interval,
                error,
            )

    async def _monitor_side_tasks(self, side_tasks: list[asyncio.Task[Any]]) -> None:
        watched = {task: task.get_name() for task in side_tasks}
        delay = LISTEN_RETRY_SECONDS[0]
        loop = asyncio.get_running_loop()
        listened_since = loop.time()
        while watched:
            done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                name = watched.pop(task)
                error = None if task.cancelled() else task.exception()
                if name == "listener":
                    if loop.time() - listened_since > LISTEN_RETRY_SECONDS[1]:
                        delay = LISTEN_RETRY_SECONDS[0]  # it had listened a while
                    logger.warning(
                        "background.queue_listener_lost listen_in=%.1fs: %s",
                        delay,
                        error,
                    )
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, LISTEN_RETRY_SECONDS[1])
                    listening = asyncio.create_task(self._listen(), name="listener")
                    listened_since = loop.time()
                    watched[listening] = "listener"
                    side_tasks.append(listening)  # cancelled at shutdown with the rest
                elif error is not None:
                    logger.warning(
                        "background.queue_side_task_failed task=%s: %s", name, error
                    )
                    self.stop()  # type: ignore[no-untyped-call]
                    return

    async def _listen(self) -> None:
        """LISTEN again once the database answers; then look for jobs at
        once (what was notified while nobody listened is gone)."""
        await self.app.check_connection_async()  # raises while it is away
        listening = self.app.job_manager.listen_for_jobs(
            on_notification=self._handle_notification,
            queues=self.queues,
        )
        self._new_job_event.set()
        await listening
