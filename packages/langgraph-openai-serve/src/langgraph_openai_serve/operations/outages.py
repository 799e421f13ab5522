"""What a database outage looks like to the code that meets it.

A database that goes away (a failover, a pooler restart, a maintenance
window), refuses connections or stalls shows up as one of a few errors:
psycopg's ``OperationalError`` (a connection refused, closed or reset) and
``InterfaceError`` (a connection already closed), psycopg_pool's
``PoolTimeout`` (no connection within the pool's wait) and LGOS's own
``DatabaseTimeout`` (an operation past ``LGOS_DATABASE_TIMEOUT``).
``database_fault`` names which: the API answers 503 for them, never 500,
and jobs wait them out instead of failing (a database fault is not the
run's fault). psycopg is an optional extra, so its classes are recognised
by name and module, never imported here.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Literal

from langgraph_openai_serve.observability.database import FaultCause

Fault = Literal["database_unavailable", "server_busy"]
"""``server_busy``: the database answers but every pooled connection is in
use; ``database_unavailable``: it does not answer, refuses or broke."""

RETRY_AFTER_SECONDS = 1
"""What a client told to come back is told to wait (``Retry-After``)."""

_UNAVAILABLE = {
    ("psycopg", "OperationalError"),
    ("psycopg", "InterfaceError"),
}


class DatabaseTimeout(TimeoutError):
    """A database operation outlived its deadline (``LGOS_DATABASE_TIMEOUT``)."""


def database_fault(exc: BaseException) -> Fault | None:
    """Which outage ``exc`` (or the error it was raised from) is, if any."""
    seen: BaseException | None = exc
    for _ in range(5):  # an error wrapped by a library a few times at most
        if seen is None:
            return None
        fault = _fault_of(seen)
        if fault is not None:
            return fault
        seen = seen.__cause__ or seen.__context__
    return None


def fault_cause(exc: BaseException) -> FaultCause | None:
    """Which cause ``exc`` counts under, if it is an outage at all: a
    deadline past (timeout), no pooled connection in time (busy), or the
    connection broke or was refused (unavailable)."""
    fault = database_fault(exc)
    if fault is None:
        return None
    if fault == "server_busy":
        return "busy"
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        if isinstance(seen, DatabaseTimeout):
            return "timeout"
        seen = seen.__cause__ or seen.__context__
    return "unavailable"


def _fault_of(exc: BaseException) -> Fault | None:
    if isinstance(exc, DatabaseTimeout):
        return "database_unavailable"
    for cls in type(exc).__mro__:
        package = cls.__module__.split(".", 1)[0]
        if package == "psycopg_pool" and cls.__name__ == "PoolTimeout":
            return "server_busy"
        if (package, cls.__name__) in _UNAVAILABLE:
            return "database_unavailable"
    return None


class Deadline:
    """Bounds the block it guards to ``seconds``; past them the block's
    task is cancelled and ``DatabaseTimeout`` raised.

    The cancel is sent twice, ``grace`` seconds apart: psycopg answers a
    first cancel of a query in flight by asking the server to cancel it,
    which a stalled server never answers, and a second one by closing the
    connection at once. So the block ends within ``seconds + grace`` whatever
    the server does (the pool replaces the closed connection).
    """

    __slots__ = ("_cancelling", "_fired", "_handle", "_task", "grace", "seconds")

    def __init__(self, seconds: float, grace: float = 0.2) -> None:
        self.seconds = seconds
        self.grace = grace
        self._fired = 0

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        assert task is not None, "a deadline guards a task's code"
        self._task = task
        self._cancelling = task.cancelling()
        self._handle = asyncio.get_running_loop().call_later(self.seconds, self._fire)

    def _fire(self) -> None:
        self._fired += 1
        self._task.cancel()
        if self._fired == 1:
            self._handle = asyncio.get_running_loop().call_later(self.grace, self._fire)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._handle.cancel()
        if not self._fired:
            return
        for _ in range(self._fired):
            self._task.uncancel()
        if exc_type is asyncio.CancelledError and (
            self._task.cancelling() <= self._cancelling
        ):
            raise DatabaseTimeout(
                f"the database did not answer within {self.seconds:g} s"
            ) from exc
