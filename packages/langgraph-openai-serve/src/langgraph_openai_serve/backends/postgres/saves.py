"""Kept Responses written together: one INSERT for the saves of a loop turn.

Each statement costs the API process far more CPU in psycopg's path (the
pool's checkout, the query's adaptation and preparation, the socket's reader
registration and wake-up) than its row does: about 0.2 ms warm, twice that
in situ, against a request of 1.2 ms in process. So a save does not start a
statement of its own: it queues its row, and a writer task, started by the
first save of an empty queue, writes every queued row in one multi-row
INSERT. The writer's first step runs after the callbacks already ready in
this turn of the event loop, so the requests that finish in the same turn
share its statement (a lone save waits one turn, not a timer); the saves
made while a statement is in flight go together in the next one.

A statement is all or nothing (autocommit), so when one of several rows
fails (an id that exists already), no row was written and each is tried
again on its own: only the failing save fails. A save whose caller went away
while it waited is still written, as one already sent would be.

The Response of a save was answered already, so a connection the database
broke does not lose it: the save goes again on a checked pool, and is
written, or was already (its id exists: the first try reached the
database).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

Row = tuple[Any, Any, Any, Any]
"""id, scope, snapshot and input items, adapted for psycopg."""

MAX_ROWS = 64
"""Rows per statement (4 parameters each, far under PostgreSQL's 65,535)."""

_INSERT = (
    "INSERT INTO lgos_background_responses (id, scope, snapshot, input_items) VALUES "
)
_VALUES = "(%s, %s, %s, %s)"


def insert_statement(rows: int) -> str:
    """The INSERT of ``rows`` Responses."""
    return _INSERT + ", ".join([_VALUES] * rows)


class SaveBatcher:
    """Writes saved rows, one statement for all the saves that waited.

    ``connection`` gives a pooled connection (``async with``); ``once_more``
    sends a try again on a checked pool after the database broke its
    connection (``Database.once_more``).
    """

    def __init__(
        self,
        connection: Callable[[], Awaitable[Any]],
        once_more: Callable[[Callable[[], Awaitable[None]]], Awaitable[None]],
    ) -> None:
        self._connection = connection
        self._once_more = once_more
        self._waiting: list[tuple[Row, asyncio.Future[None]]] = []
        self._writing = False
        self._drain: asyncio.Task[None] | None = None

    async def save(self, row: Row) -> None:
        """Write ``row``; return once it is stored (raise if it failed)."""
        tries = 0

        async def attempt() -> None:
            nonlocal tries
            tries += 1
            await (self._save(row) if tries == 1 else self._save_again(row))

        await self._once_more(attempt)

    async def _save_again(self, row: Row) -> None:
        from psycopg.errors import UniqueViolation

        with contextlib.suppress(UniqueViolation):
            await self._save(row)

    async def _save(self, row: Row) -> None:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((row, future))
        if not self._writing:
            self._writing = True
            # A context of its own: the writer serves every save queued while
            # it runs, so its statements are not bounded by what is left of
            # the first caller's deadline (each gets the database's whole).
            self._drain = asyncio.create_task(
                self._write_waiting(), context=contextvars.Context()
            )
        await future

    async def close(self) -> None:
        """Wait for the saves still queued to be written."""
        drain = self._drain
        if drain is not None and not drain.done():
            await asyncio.shield(drain)

    async def _write_waiting(self) -> None:
        batch: list[tuple[Row, asyncio.Future[None]]] = []
        try:
            while self._waiting:
                batch = self._waiting[:MAX_ROWS]
                del self._waiting[:MAX_ROWS]
                await self._write(batch)
                batch = []
        finally:
            self._writing = False
            for _, future in batch + self._waiting:
                future.cancel()  # only when this task itself was cancelled
            self._waiting.clear()

    async def _write(self, batch: list[tuple[Row, asyncio.Future[None]]]) -> None:
        try:
            await self._insert([row for row, _ in batch])
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0][1], exc)
                return
            for row, future in batch:  # nothing was written: find the culprit
                try:
                    await self._insert([row])
                except Exception as single:
                    _settle(future, single)
                else:
                    _settle(future, None)
            return
        for _, future in batch:
            _settle(future, None)

    async def _insert(self, rows: list[Row]) -> None:
        async with await self._connection() as conn:
            await conn.execute(
                insert_statement(len(rows)), [value for row in rows for value in row]
            )


def _settle(future: asyncio.Future[None], error: Exception | None) -> None:
    if future.done():
        return  # its caller went away; the row was written all the same
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
