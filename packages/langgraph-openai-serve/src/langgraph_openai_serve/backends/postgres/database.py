"""``Database``: the PostgreSQL backend's connection pool, opened on first use.

Every store of the backend takes its connections here, so one pool serves
them all: kept Responses, Conversations, batches, the queue's statistics
and the checkpoints of durable runs. The pool is opened lazily, inside the
event loop, so building a server connects to nothing; the backend closes it.

Every wait on the database is bounded: a new connection by
``connect_timeout`` and a connection to a host that vanished by TCP
keepalives and a user timeout (``bounded_conninfo``, for every connection
the backend opens, the queue's and the listener's too), a checkout by the
pool's ``timeout``, and a whole ``connection()`` block (checkout,
statements, return) by ``deadline`` (``operations/outages.py``), so a
database that stalls costs a request a few seconds and a 503, not the
outage's length. Blocks that may rightly run long (a batch's results
streamed to the Files API, migrations) ask for
``connection(deadline=None)``.

A connection the database broke (a failover, a restart, a terminated
backend) fails its first statement; the pool then checks every idle
connection (``heal``), replacing the dead ones, so the next request gets a
live one. A read (``@read_only``: a statement that changes nothing, safe to send
again) waits for that check and is tried once more instead of failing.

The pool must follow the rules LangGraph's adapters and the run coordinator
share: autocommit, ``prepare_threshold=0`` and dict rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from langgraph_openai_serve.observability.database import (
    count_fault,
    count_reconnects,
)
from langgraph_openai_serve.operations.outages import (
    DatabaseTimeout,
    Deadline,
    database_fault,
    fault_cause,
)

logger = logging.getLogger("langgraph_openai_serve")

POOL_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
"""Connection settings of the pool (the backend adds dict rows)."""

TCP_BOUNDS: dict[str, int] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
"""libpq's TCP bounds: an idle connection whose host stopped answering (a
partition, a failover that moved the address) is found dead within about
25 s, and one waiting for an acknowledgement within 30 s, instead of when
the kernel gives up (hours). A stalled server whose host still answers TCP
is not cut by them: the deadline bounds that."""


def bounded_conninfo(conninfo: str, connect_timeout: int) -> str:
    """``conninfo`` with ``connect_timeout`` and ``TCP_BOUNDS`` added, unless
    it sets them itself (an operator's URL parameters win)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(conninfo)
    params.setdefault("connect_timeout", connect_timeout)
    for name, value in TCP_BOUNDS.items():
        params.setdefault(name, value)
    return make_conninfo(**params)  # type: ignore[arg-type]


_UNBOUNDED: Any = object()

_ENDS: ContextVar[float | None] = ContextVar("lgos_database_ends", default=None)
"""When the operation in progress must be over (loop time): a try sent
again after a broken connection gets what is left of the first's deadline,
not a deadline of its own."""


class Database:
    """One pool, opened when the first connection is asked for;
    ``deadline``: the seconds a ``connection()`` block may take."""

    def __init__(self, pool: Any, *, deadline: float | None = None) -> None:
        self.pool = pool
        self.deadline = deadline
        self._opened = False
        self._lock: asyncio.Lock | None = None
        self._healing: asyncio.Task[None] | None = None
        self._replaced = 0
        """Broken connections the pool replaced, as counted so far."""

    @property
    def conninfo(self) -> str:
        return str(self.pool.conninfo)

    async def connection(
        self, *, deadline: float | None = _UNBOUNDED
    ) -> contextlib.AbstractAsyncContextManager[Any] | _Bounded:
        """A pooled connection (``async with``), opening the pool on first
        use; the block is bounded by ``deadline`` (the database's own unless
        given; ``None``: unbounded)."""
        if not self._opened:
            await self.open()
        seconds = self.deadline if deadline is _UNBOUNDED else deadline
        if seconds is None:
            return self.pool.connection()  # type: ignore[no-any-return]
        ends = _ENDS.get()
        if ends is not None:
            left = ends - asyncio.get_running_loop().time()
            seconds = min(seconds, max(left, _LEAST_SECONDS))
        return _Bounded(self, seconds)

    async def once_more(self, call: Callable[[], Awaitable[R]]) -> R:
        """``call``, and when the database broke its connection, ``call``
        again on a checked pool; both tries (and the check) within one
        ``deadline``, so a request that meets a dead connection during an
        outage is answered as soon as one that did not."""
        loop = asyncio.get_running_loop()
        ends = None if self.deadline is None else loop.time() + self.deadline
        token = _ENDS.set(ends)
        try:
            try:
                return await call()
            except Exception as error:
                if not broke_connection(error):
                    raise
                left = None if ends is None else ends - loop.time()
                try:
                    await asyncio.wait_for(asyncio.shield(self.heal()), left)
                except TimeoutError:
                    count_fault("timeout")
                    raise DatabaseTimeout(
                        f"the database did not answer within {self.deadline:g} s"
                    ) from error
            return await call()
        finally:
            _ENDS.reset(token)

    def heal(self) -> asyncio.Task[None]:
        """Check the pool's idle connections, replacing the dead ones (one
        check at a time; a caller during one shares it)."""
        if self._healing is None or self._healing.done():
            self._healing = asyncio.create_task(self._check())
        return self._healing

    async def _check(self) -> None:
        try:
            async with Deadline(self.deadline or 30.0):
                await self.pool.check()
        except Exception as error:  # the next fault checks again
            logger.warning("database.check_failed: %s", error)
        else:
            logger.info("database.checked idle connections")
        self._count_replaced()

    def _count_replaced(self) -> None:
        """Count the connections psycopg_pool found broken (in use or idle)
        and replaced since the last count."""
        stats = self.pool.get_stats()
        replaced = stats.get("connections_lost", 0) + stats.get("returns_bad", 0)
        count_reconnects("pool", replaced - self._replaced)
        self._replaced = replaced

    async def open(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self._opened:
                await self.pool.open()
                self._opened = True

    async def close(self) -> None:
        if self._opened:
            await self.pool.close()
            self._opened = False


class _Bounded:
    """A pooled connection whose block ``Deadline`` bounds; a connection the
    database broke has the pool checked (a class, not a generator: every
    statement of a store goes through it)."""

    __slots__ = ("_database", "_deadline", "_pooled")

    def __init__(self, database: Database, seconds: float) -> None:
        self._database = database
        self._deadline = Deadline(seconds)
        self._pooled: Any = None

    async def __aenter__(self) -> Any:
        await self._deadline.__aenter__()
        self._pooled = self._database.pool.connection()
        try:
            return await self._pooled.__aenter__()
        except BaseException as error:
            await self._left(error)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self._pooled.__aexit__(exc_type, exc, traceback)
        except BaseException as error:
            await self._left(error)
            raise
        await self._left(exc)

    async def _left(self, error: BaseException | None) -> None:
        """Leave the deadline (a ``DatabaseTimeout`` when it fired), counting
        an outage the block met."""
        if error is None:
            await self._deadline.__aexit__(None, None, None)
            return
        if broke_connection(error):
            self._database.heal()
        try:
            await self._deadline.__aexit__(type(error), error, error.__traceback__)
        except DatabaseTimeout:
            count_fault("timeout")
            raise
        cause = fault_cause(error)
        if cause is not None:
            count_fault(cause)


def broke_connection(error: BaseException) -> bool:
    """The database broke or refused the connection (not a deadline: a
    stalled database is not asked again at once)."""
    return database_fault(error) == "database_unavailable" and not isinstance(
        error, DatabaseTimeout
    )


_LEAST_SECONDS = 0.05
"""The shortest bound a try sent again gets (its first try used the rest)."""


class _HasDatabase(Protocol):
    _database: Database


S = TypeVar("S", bound=_HasDatabase)
P = ParamSpec("P")
R = TypeVar("R")


def read_only(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """A store method that only reads: when the database broke its
    connection, it is tried once more on a checked pool."""

    @functools.wraps(method)
    async def call(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._database.once_more(
            functools.partial(method, self, *args, **kwargs)
        )

    return call
