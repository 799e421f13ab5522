"""Retry policies: how long a job that raised waits before it runs again.

Every policy hands a job its worker stopped (``CancelledError``) back at
once: a stop is not the job's fault, and another worker should take it now.
Nor is a database fault: such a job runs again every
``DATABASE_RETRY_SECONDS`` until the database is back, and is never
abandoned for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from langgraph_openai_serve.jobs.protocol import JobArgs, RetryPolicy
from langgraph_openai_serve.operations.outages import database_fault

DATABASE_RETRY_SECONDS = 2.0

Backoff = Callable[[BaseException, int, JobArgs], float | None]


def handing_back(backoff: Backoff) -> RetryPolicy:
    """``backoff`` for the job's own errors; a stopped worker's job goes back
    at once, one that met a database fault once the database may be back."""

    def policy(error: BaseException, attempts: int, args: JobArgs) -> float | None:
        if isinstance(error, asyncio.CancelledError):
            return 0.0
        if database_fault(error) is not None:
            return DATABASE_RETRY_SECONDS
        return backoff(error, attempts, args)

    return policy


def every(seconds: float) -> RetryPolicy:
    """Again after ``seconds``, however often it failed (the task bounds its
    own attempts)."""
    return handing_back(lambda error, attempts, args: seconds)


def doubling(max_attempts: int) -> RetryPolicy:
    """Again after 1, 2, 4, ... seconds; abandoned after ``max_attempts``."""

    def backoff(error: BaseException, attempts: int, args: JobArgs) -> float | None:
        if attempts + 1 >= max_attempts:
            return None
        return float(2**attempts)

    return handing_back(backoff)
