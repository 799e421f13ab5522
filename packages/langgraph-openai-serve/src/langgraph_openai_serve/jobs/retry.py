"""Retry policies: how long a job that raised waits before it runs again.

Every policy hands a job its worker stopped (``CancelledError``) back at
once: a stop is not the job's fault, and another worker should take it now.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from langgraph_openai_serve.jobs.protocol import JobArgs, RetryPolicy

Backoff = Callable[[BaseException, int, JobArgs], float | None]


def handing_back(backoff: Backoff) -> RetryPolicy:
    """``backoff`` for errors; a stopped worker's job goes back at once."""

    def policy(error: BaseException, attempts: int, args: JobArgs) -> float | None:
        if isinstance(error, asyncio.CancelledError):
            return 0.0
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
