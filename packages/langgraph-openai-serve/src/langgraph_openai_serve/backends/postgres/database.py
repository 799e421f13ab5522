"""``Database``: the PostgreSQL backend's connection pool, opened on first use.

Every store of the backend takes its connections here, so one pool serves
them all: kept Responses, Conversations, batches, the queue's statistics
and the checkpoints of durable runs. The pool is opened lazily, inside the
event loop, so building a server connects to nothing; the backend closes it.

The pool must follow the rules LangGraph's adapters and the run coordinator
share: autocommit, ``prepare_threshold=0`` and dict rows.
"""

from __future__ import annotations

import asyncio
from typing import Any

POOL_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
"""Connection settings of the pool (the backend adds dict rows)."""


class Database:
    """One pool, opened when the first connection is asked for."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self._opened = False
        self._lock: asyncio.Lock | None = None

    @property
    def conninfo(self) -> str:
        return str(self.pool.conninfo)

    async def connection(self) -> Any:
        """A pooled connection (``async with``), opening the pool on first use."""
        if not self._opened:
            await self.open()
        return self.pool.connection()

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
