"""``PostgresBatchStore``: batches in PostgreSQL, on the backend's pool.

``lgos_batches`` holds each batch's Batch object, its counters and where its
chunks are; ``lgos_batch_lines`` its validated lines and, once run, each
line's output line (``result``), deleted when the batch ends (the files
keep them). A result is set only where none is (``record``), in the
statement that counts it, so a line run twice is kept and counted once.
Every status change is an ``UPDATE ... WHERE status = ANY(before)`` whose
transaction also queues the next steps. The backend creates the tables
(``schema.py``, ``lgos db-setup``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langgraph_openai_serve.backends.postgres.database import Database, read_only
from langgraph_openai_serve.backends.postgres.schema import OPEN_BATCH
from langgraph_openai_serve.batches.protocol import (
    OVERDUE_PAGE,
    BatchLine,
    ChunkEnqueue,
    Enqueue,
    LineResult,
    StoredBatch,
    Usage,
)
from langgraph_openai_serve.operations.admission import LimitReached

_dumps = json.JSONEncoder(separators=(",", ":")).encode
_COLUMNS = (
    "scope, batch, ending, chunks, completed, failed, input_tokens, "
    "output_tokens, cached_tokens, reasoning_tokens"
)


class PostgresBatchStore:
    """A ``BatchStore`` on the backend's ``Database``."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._connection = database.connection

    async def create(
        self,
        scope: str,
        batch: dict[str, Any],
        enqueue: Enqueue,
        most_open: int | None = None,
    ) -> None:
        async with await self._connection() as conn, conn.transaction():
            if most_open is not None:
                await _within_limit(conn, scope, most_open)
            await conn.execute(
                "INSERT INTO lgos_batches (id, scope, batch) VALUES (%s, %s, %s)",
                (batch["id"], scope, _dumps(batch)),
            )
            await enqueue(conn)

    @read_only
    async def get(self, batch_id: str, scope: str) -> dict[str, Any] | None:
        async with await self._connection() as conn:
            cursor = await conn.execute(
                f"SELECT {_COLUMNS} FROM lgos_batches WHERE id = %s AND scope = %s",
                (batch_id, scope),
            )
            row = await cursor.fetchone()
        return _public(row) if row is not None else None

    @read_only
    async def page(
        self, scope: str, after: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], bool]:
        async with await self._connection() as conn:
            cursor = await conn.execute(
                f"SELECT {_COLUMNS} FROM lgos_batches WHERE scope = %s "
                "AND (%s::text IS NULL OR id < %s) ORDER BY id DESC LIMIT %s",
                (scope, after, after, limit + 1),
            )
            rows = await cursor.fetchall()
        return [_public(row) for row in rows[:limit]], len(rows) > limit

    @read_only
    async def read(self, batch_id: str) -> StoredBatch | None:
        async with await self._connection() as conn:
            cursor = await conn.execute(
                f"SELECT {_COLUMNS} FROM lgos_batches WHERE id = %s", (batch_id,)
            )
            row = await cursor.fetchone()
        if row is None:
            return None
        return StoredBatch(
            scope=row["scope"],
            batch=row["batch"],
            ending=row["ending"],
            chunks=row["chunks"],
            completed=row["completed"],
            failed=row["failed"],
        )

    async def add_lines(self, batch_id: str, lines: Sequence[BatchLine]) -> None:
        async with await self._connection() as conn, conn.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO lgos_batch_lines (batch_id, seq, line, custom_id, body) "
                "VALUES (%s, %s, %s, %s, %s)",
                [
                    (batch_id, line.seq, line.number, line.custom_id, line.body)
                    for line in lines
                ],
            )

    async def drop_lines(self, batch_id: str) -> None:
        async with await self._connection() as conn:
            await conn.execute(
                "DELETE FROM lgos_batch_lines WHERE batch_id = %s", (batch_id,)
            )

    async def transition(
        self,
        batch_id: str,
        before: frozenset[str],
        fields: dict[str, Any],
        *,
        ending: str | None = None,
        chunks: int | None = None,
        enqueue: Enqueue | None = None,
    ) -> bool:
        async with await self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "UPDATE lgos_batches SET batch = batch || %s::jsonb, "
                "ending = coalesce(%s, ending), chunks = coalesce(%s, chunks) "
                "WHERE id = %s AND batch->>'status' = ANY(%s) RETURNING id",
                (_dumps(fields), ending, chunks, batch_id, list(before)),
            )
            if await cursor.fetchone() is None:
                return False
            if enqueue is not None:
                await enqueue(conn)
        return True

    async def claim_chunks(
        self, batch_id: str, most: int, enqueue: ChunkEnqueue
    ) -> list[int]:
        async with await self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "WITH old AS (SELECT next_chunk FROM lgos_batches WHERE id = %s "
                "FOR UPDATE) UPDATE lgos_batches b "
                "SET next_chunk = least(b.chunks, b.next_chunk + %s) FROM old "
                "WHERE b.id = %s AND b.next_chunk < b.chunks "
                "RETURNING old.next_chunk AS first, b.next_chunk AS last",
                (batch_id, most, batch_id),
            )
            row = await cursor.fetchone()
            if row is None:
                return []
            taken = list(range(row["first"], row["last"]))
            await enqueue(conn, taken)
        return taken

    @read_only
    async def claimed(self, batch_id: str) -> int:
        async with await self._connection() as conn:
            cursor = await conn.execute(
                "SELECT next_chunk FROM lgos_batches WHERE id = %s", (batch_id,)
            )
            row = await cursor.fetchone()
        return int(row["next_chunk"]) if row is not None else 0

    @read_only
    async def pending(self, batch_id: str, first: int, last: int) -> list[BatchLine]:
        async with await self._connection() as conn:
            cursor = await conn.execute(
                "SELECT seq, line, custom_id, body FROM lgos_batch_lines "
                "WHERE batch_id = %s AND seq >= %s AND seq < %s AND result IS NULL "
                "ORDER BY seq",
                (batch_id, first, last),
            )
            rows = await cursor.fetchall()
        return [
            BatchLine(row["seq"], row["line"], row["custom_id"], row["body"])
            for row in rows
        ]

    async def record(self, batch_id: str, result: LineResult) -> bool:
        usage = result.usage
        async with await self._connection() as conn:
            cursor = await conn.execute(
                "WITH kept AS ("
                " UPDATE lgos_batch_lines SET result = %s, failed = %s"
                " WHERE batch_id = %s AND seq = %s AND result IS NULL"
                " RETURNING failed AS line_failed"
                ") UPDATE lgos_batches SET"
                " completed = completed + (NOT line_failed)::int,"
                " failed = failed + line_failed::int,"
                " input_tokens = input_tokens + %s,"
                " output_tokens = output_tokens + %s,"
                " cached_tokens = cached_tokens + %s,"
                " reasoning_tokens = reasoning_tokens + %s"
                " FROM kept WHERE id = %s RETURNING id",
                (
                    result.text,
                    result.failed,
                    batch_id,
                    result.seq,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cached_tokens,
                    usage.reasoning_tokens,
                    batch_id,
                ),
            )
            return await cursor.fetchone() is not None

    async def settle(self, batch_id: str, code: str, message: str) -> None:
        async with await self._connection() as conn:
            await conn.execute(
                "UPDATE lgos_batch_lines SET failed = true, result = json_build_object("
                " 'id', 'batch_req_' || replace(gen_random_uuid()::text, '-', ''),"
                " 'custom_id', custom_id, 'response', NULL,"
                " 'error', json_build_object('code', %s::text, 'message', %s::text)"
                ")::text WHERE batch_id = %s AND result IS NULL",
                (code, message, batch_id),
            )

    async def results(self, batch_id: str, *, failed: bool) -> AsyncIterator[str]:
        # A server-side cursor: the lines stream, never all in memory at once,
        # for as long as the Files API takes them (no deadline).
        async with (
            await self._connection(deadline=None) as conn,
            conn.transaction(),
            conn.cursor(name="lgos_batch_results") as cursor,
        ):
            await cursor.execute(
                "SELECT result FROM lgos_batch_lines WHERE batch_id = %s "
                "AND failed = %s AND result IS NOT NULL ORDER BY seq",
                (batch_id, failed),
            )
            async for row in cursor:
                yield row["result"]

    @read_only
    async def overdue(self, now: float) -> list[str]:
        # The partial index holds only the open batches, by window end.
        async with await self._connection() as conn:
            cursor = await conn.execute(
                "SELECT id FROM lgos_batches "
                "WHERE batch->>'status' IN ('validating', 'in_progress') "
                "AND (batch->>'expires_at')::bigint <= %s "
                "ORDER BY (batch->>'expires_at')::bigint LIMIT %s",
                (int(now), OVERDUE_PAGE),
            )
            rows = await cursor.fetchall()
        return [row["id"] for row in rows]


def _public(row: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = row["batch"]
    body["request_counts"] = {
        "total": body.get("request_counts", {}).get("total", 0),
        "completed": row["completed"],
        "failed": row["failed"],
    }
    body["usage"] = Usage(
        row["input_tokens"],
        row["output_tokens"],
        row["cached_tokens"],
        row["reasoning_tokens"],
    ).body()
    return body


async def _within_limit(conn: Any, scope: str, most: int) -> None:
    """Raise ``LimitReached`` when ``scope`` has ``most`` batches open; the
    scope's creations wait for each other from here to their commit."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        (f"lgos-batches:{scope}",),
    )
    cursor = await conn.execute(
        f"SELECT count(*) AS open FROM lgos_batches WHERE scope = %s AND {OPEN_BATCH}",
        (scope,),
    )
    row = await cursor.fetchone()
    if row["open"] >= most:
        raise LimitReached("tenant_batches", most)
