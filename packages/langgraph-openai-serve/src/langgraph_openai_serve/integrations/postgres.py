"""PostgreSQL run coordination (``pip install "langgraph-openai-serve[postgres]"``).

``PostgresRunCoordinator`` grants interrupt-run leases across processes and
hosts with PostgreSQL *session* advisory locks: a lease checks a connection out
of a ``psycopg_pool.AsyncConnectionPool``, takes
``pg_try_advisory_lock(<64-bit id of the key>)`` and keeps that connection
until the ``async with`` block ends, then runs ``pg_advisory_unlock`` and
returns the connection.

Pool requirements (the pool may be the one LangGraph's ``AsyncPostgresSaver``
and ``AsyncPostgresStore`` use):

- ``kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}``
  (LangGraph's upstream connection requirements; the lock queries run outside
  any transaction and read their results by column name);
- the default ``close_returns=False``: when an unlock is indeterminate (it
  failed or was cancelled mid-flight) the coordinator closes the physical
  connection, which ends the session and so releases every lock it held, and
  hands the closed connection back for the pool to replace;
- direct PostgreSQL connections or a session-mode pooler. Transaction-mode
  poolers (PgBouncer ``pool_mode=transaction`` and the like) move a client
  between server sessions, so a session lock would not stay with its lease:
  they are not supported.

Create one coordinator per process-owned pool: ``max_concurrent_leases`` bounds
how many connections leases hold at once, so that persistence I/O on a shared
pool still finds a connection; set it below the pool's ``max_size`` when the
pool is shared. A lease for a key someone holds fails at once with
``RunBusyError``. A lease beyond ``max_concurrent_leases`` *waits* for a free
slot, and then for a pool connection, within one budget of the pool's
``timeout``; past it the lease raises ``psycopg_pool.PoolTimeout``.

Release: a holder cancelled once (``Task.cancel``, as the SSE layer does)
still runs its unlock and returns the connection. An unlock that fails or is
itself cancelled (a second cancellation, anyio's level-triggered cancel
scopes) leaves the lock's state unknown, so the connection is closed instead:
PostgreSQL ends the session and drops its locks as the server process exits.
A session lost *during* a lease (server restart, network failure) loses its
lock at once; that is noticed, and logged, only at release.

This module imports psycopg only when a coordinator is built, so it can be
imported without the extra.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from langgraph_openai_serve.graph.errors import GraphConfigurationError, RunBusyError

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

logger = logging.getLogger(__name__)

_LOCK_DOMAIN = b"lgos.run-lease.v1\x00"
_INSTALL_HINT = 'install "langgraph-openai-serve[postgres]"'


def advisory_lock_id(key: str) -> int:
    """The signed 64-bit advisory lock id that guards ``key``.

    PostgreSQL shows a held lease in ``pg_locks`` (``locktype = 'advisory'``)
    with ``classid`` the high and ``objid`` the low 32 bits of this id.
    """
    digest = hashlib.sha256(_LOCK_DOMAIN + key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresRunCoordinator:
    """Single-flight leases on PostgreSQL session advisory locks.

    Args:
        pool: an ``AsyncConnectionPool`` meeting the requirements in this
            module's documentation; the caller opens and closes it.
        max_concurrent_leases: how many leases may hold a connection at once
            (at least 1, at most the pool's ``max_size``).

    Raises:
        GraphConfigurationError: psycopg is missing or the pool or the limit
            breaks a requirement.
    """

    def __init__(
        self, pool: AsyncConnectionPool[Any], *, max_concurrent_leases: int
    ) -> None:
        try:
            from psycopg_pool import AsyncConnectionPool
        except ImportError as exc:
            raise GraphConfigurationError(
                "PostgresRunCoordinator needs psycopg and psycopg-pool; "
                f"{_INSTALL_HINT}."
            ) from exc
        if not isinstance(pool, AsyncConnectionPool):
            raise GraphConfigurationError(
                "PostgresRunCoordinator needs a psycopg_pool.AsyncConnectionPool, "
                f"not {type(pool).__name__}."
            )
        if pool.close_returns:
            raise GraphConfigurationError(
                "PostgresRunCoordinator needs a pool with close_returns=False: it "
                "closes a connection to release a lock whose unlock is uncertain."
            )
        _check_kwargs(pool.kwargs)
        if (
            isinstance(max_concurrent_leases, bool)
            or not isinstance(max_concurrent_leases, int)
            or max_concurrent_leases < 1
        ):
            raise GraphConfigurationError(
                "max_concurrent_leases must be a positive integer, "
                f"not {max_concurrent_leases!r}."
            )
        if pool.max_size and max_concurrent_leases > pool.max_size:
            raise GraphConfigurationError(
                f"max_concurrent_leases ({max_concurrent_leases}) exceeds the pool's "
                f"max_size ({pool.max_size}); keep it below max_size when the "
                "pool also serves checkpoints."
            )
        self._pool = pool
        self._slots = asyncio.Semaphore(max_concurrent_leases)
        self.max_concurrent_leases = max_concurrent_leases

    def lease(self, key: str) -> AbstractAsyncContextManager[None]:
        """Hold ``key`` for the ``async with`` block.

        Raises:
            RunBusyError: on entry, when any session holds the key.
            psycopg_pool.PoolTimeout: no lease slot or pool connection became
                free within the pool's ``timeout``.
        """
        return self._lease(key)

    @asynccontextmanager
    async def _lease(self, key: str) -> AsyncIterator[None]:
        lock_id = advisory_lock_id(key)
        deadline = time.monotonic() + self._pool.timeout
        await self._take_slot(deadline)
        try:
            conn = await self._pool.getconn(
                timeout=max(deadline - time.monotonic(), 0.0)
            )
            try:
                locked = await self._try_lock(conn, lock_id)
            except BaseException:
                # The lock may or may not have been taken: end the session.
                await self._discard(conn)
                raise
            if not locked:
                await self._give_back(conn)
                raise RunBusyError(key)
            try:
                yield
            finally:
                await self._unlock(conn, lock_id, key)
        finally:
            self._slots.release()

    async def _take_slot(self, deadline: float) -> None:
        try:
            async with asyncio.timeout(max(deadline - time.monotonic(), 0.0)):
                await self._slots.acquire()
        except TimeoutError:
            from psycopg_pool import PoolTimeout

            raise PoolTimeout(
                f"no run lease slot became free within {self._pool.timeout:.2f} s "
                f"(max_concurrent_leases={self.max_concurrent_leases})"
            ) from None

    async def _try_lock(self, conn: AsyncConnection[Any], lock_id: int) -> bool:
        if not conn.autocommit:
            raise GraphConfigurationError(
                "PostgresRunCoordinator needs pool connections with autocommit=True."
            )
        cursor = await conn.execute(
            "SELECT pg_try_advisory_lock(%s) AS locked", (lock_id,)
        )
        return _column(await cursor.fetchone(), "locked") is True

    async def _unlock(self, conn: AsyncConnection[Any], lock_id: int, key: str) -> None:
        try:
            cursor = await conn.execute(
                "SELECT pg_advisory_unlock(%s) AS unlocked", (lock_id,)
            )
            unlocked = _column(await cursor.fetchone(), "unlocked") is True
        except BaseException as exc:
            logger.warning(
                "unlocking run lease %s did not complete (%s); closing its "
                "connection so PostgreSQL releases the lock",
                key,
                type(exc).__name__,
            )
            await self._discard(conn)
            if not isinstance(exc, Exception):
                raise
            return
        if not unlocked:
            logger.warning(
                "run lease %s was not held by its session at release; closing "
                "the connection",
                key,
            )
            await self._discard(conn)
            return
        await self._give_back(conn)

    async def _discard(self, conn: AsyncConnection[Any]) -> None:
        """Close the physical connection, then let the pool replace it."""
        await conn.close()
        await self._give_back(conn)

    async def _give_back(self, conn: AsyncConnection[Any]) -> None:
        # Shielded: a cancelled caller must not leave the pool one slot short.
        await asyncio.shield(self._pool.putconn(conn))


def _check_kwargs(kwargs: Any) -> None:
    """Check the connection kwargs of a pool, when they are a plain mapping."""
    if not isinstance(kwargs, Mapping):
        return  # a kwargs callable: checked on each connection instead
    if kwargs.get("autocommit") is not True:
        raise GraphConfigurationError(
            "PostgresRunCoordinator needs a pool built with "
            'kwargs={"autocommit": True, ...}.'
        )
    if kwargs.get("row_factory") is None:
        raise GraphConfigurationError(
            "PostgresRunCoordinator needs a pool with mapping rows: "
            'kwargs={"row_factory": psycopg.rows.dict_row, ...}.'
        )


def _column(row: Any, name: str) -> Any:
    if not isinstance(row, Mapping):
        raise GraphConfigurationError(
            "PostgresRunCoordinator needs a pool with mapping rows "
            "(row_factory=psycopg.rows.dict_row)."
        )
    return row[name]
