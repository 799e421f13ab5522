"""procrastinate's ``JobManager``, recording a job's end through an outage.

When a job ends, procrastinate's worker records it (finished, or put back
for a retry) in one statement. If the database breaks that statement's
connection (a restart, a failover), procrastinate lets the error escape the
job's task and the job stays ``doing`` under a worker that is still alive
and heartbeating: nothing runs it again or ends it until that worker dies
(procrastinate #1463). ``OutlastingJobManager`` sends the statement again
until the database takes it, every second for up to ``RECORD_PATIENCE``
seconds. A try whose connection broke after the database committed leaves
the job no longer ``doing``, so procrastinate's function then refuses the
next try; after a first try that met an outage, that refusal means the end
was recorded.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable

from procrastinate import exceptions, jobs
from procrastinate.manager import JobManager

from langgraph_openai_serve.operations.outages import database_fault

logger = logging.getLogger("langgraph_openai_serve")

RECORD_PATIENCE = 120.0
"""Seconds of outage a job's end is sent again for; past them the error is
procrastinate's again (the job is retried once its worker is found stalled)."""
RECORD_RETRY_SECONDS = 1.0

_ALREADY_RECORDED = ('not in "doing"', "invalid status to retry")
"""How procrastinate's functions refuse a job that is no longer ``doing``."""


class OutlastingJobManager(JobManager):
    """A ``JobManager`` whose record of a job's end outlasts an outage."""

    async def finish_job_by_id_async(
        self, job_id: int, status: jobs.Status, delete_job: bool
    ) -> None:
        async def finish() -> None:
            await JobManager.finish_job_by_id_async(self, job_id, status, delete_job)

        await _recorded(finish, job_id)

    async def retry_job_by_id_async(
        self,
        job_id: int,
        retry_at: dt.datetime,
        priority: int | None = None,
        queue: str | None = None,
        lock: str | None = None,
    ) -> None:
        async def retry() -> None:
            await JobManager.retry_job_by_id_async(
                self, job_id, retry_at, priority, queue, lock
            )

        await _recorded(retry, job_id)


async def _recorded(record: Callable[[], Awaitable[None]], job_id: int) -> None:
    loop = asyncio.get_running_loop()
    failing_since: float | None = None
    while True:
        try:
            await record()
            return
        except exceptions.ConnectorException as error:
            if failing_since is not None and _already_recorded(error):
                return
            if database_fault(error) is None:
                raise
            if failing_since is None:
                failing_since = loop.time()
                logger.warning("background.job_end_waits job=%d: %s", job_id, error)
            elif loop.time() - failing_since >= RECORD_PATIENCE:
                raise
        await asyncio.sleep(RECORD_RETRY_SECONDS)


def _already_recorded(error: BaseException) -> bool:
    cause = error.__cause__
    return cause is not None and any(text in str(cause) for text in _ALREADY_RECORDED)
