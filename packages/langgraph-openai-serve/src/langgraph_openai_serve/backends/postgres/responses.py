"""``PostgresResponseStore``: kept Responses in PostgreSQL.

Snapshots, input items, stream events and idempotency keys live in two
tables (``schema.py``), so any API process serves any Response and an API
restart loses nothing. A Response is
stored in the same transaction that puts its job on the queue (the backend's
``enqueue`` runs on the store's connection), so neither exists without the
other. Followers of a
running stream (``response_follower.py``) wake on a notification sent with
each stored event and snapshot (``notify.py``) and wait out a database
outage of up to ``follow_patience`` seconds; the retention sweep is
``retention_sweep.py``. The backend creates the tables (``lgos db-setup``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic_core import to_json

from langgraph_openai_serve.backends.postgres.database import Database, read_only
from langgraph_openai_serve.backends.postgres.notify import (
    NOTIFY,
    ResponseListener,
)
from langgraph_openai_serve.backends.postgres.response_follower import (
    ResponseFollower,
)
from langgraph_openai_serve.backends.postgres.response_rows import (
    CHAIN,
    DRIVES,
    LIVE_RUN_INDEX,
    job_json,
    job_of,
    now,
    original,
)
from langgraph_openai_serve.backends.postgres.retention_sweep import (
    SWEEP_BATCH,
    delete_expired,
)
from langgraph_openai_serve.backends.postgres.saves import SaveBatcher
from langgraph_openai_serve.backends.postgres.schema import (
    OUTPUT_IDS,
    UNFINISHED_BACKGROUND,
)
from langgraph_openai_serve.graph.errors import RunBusyError
from langgraph_openai_serve.operations.admission import LimitReached
from langgraph_openai_serve.responses.protocol import (
    TERMINAL_STATUSES,
    Attempt,
    BackgroundJob,
    Enqueue,
    StoredEvent,
    StoredTurn,
)

_dumps = to_json
"""JSON for the columns: pydantic-core's encoder writes compact UTF-8 in one
native call, several times cheaper than the standard library's (a kept
Response's snapshot is encoded on every request that keeps one)."""


class PostgresResponseStore:
    """A ``ResponseStore`` on the backend's ``Database``.

    ``listener`` wakes the followers of this process's streams; by default the
    store opens its own, on the pool's conninfo.
    """

    def __init__(
        self,
        database: Database,
        *,
        idempotency_ttl: dt.timedelta = dt.timedelta(hours=24),
        poll_interval: float = 1.0,
        follow_patience: float = 120.0,
        listener: ResponseListener | None = None,
        sweep_batch: int = SWEEP_BATCH,
    ) -> None:
        self._database = database
        self._connection = database.connection
        self._listener = listener or ResponseListener(database.conninfo)
        self._saves = SaveBatcher(self._connection, database.once_more)
        """Concurrent saves share statements (``saves.py``)."""
        self.idempotency_ttl = idempotency_ttl
        self._follower = ResponseFollower(
            self._connection,
            self._listener,
            poll_interval=poll_interval,
            follow_patience=follow_patience,
        )
        """Streams a running Response's events (``response_follower.py``)."""
        self.sweep_batch = sweep_batch
        """Expired Responses one transaction of the retention sweep deletes."""

    @property
    def listener(self) -> ResponseListener:
        """Wakes this process's followers (one per store)."""
        return self._listener

    async def create(
        self,
        job: BackgroundJob,
        snapshot: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        body_digest: str | None = None,
        enqueue: Enqueue | None = None,
        input_items: list[dict[str, Any]] | None = None,
        most_unfinished: int | None = None,
    ) -> tuple[dict[str, Any], bool]:
        from psycopg.errors import UniqueViolation
        from psycopg.types.json import Jsonb

        try:
            async with await self._connection() as conn, conn.transaction():
                if idempotency_key is not None:
                    # An expired key is released so it can name a new Response.
                    await conn.execute(
                        "UPDATE lgos_background_responses SET idempotency_key = NULL "
                        "WHERE scope = %s AND idempotency_key = %s AND created_at < %s",
                        (job.scope, idempotency_key, now() - self.idempotency_ttl),
                    )
                    known = await self._by_key(conn, job.scope, idempotency_key)
                    if known is not None:
                        return original(known, idempotency_key, body_digest), False
                if most_unfinished is not None:
                    await _within_limit(conn, job.scope, most_unfinished)
                # A live Response of the same run in the scope fails the
                # INSERT (LIVE_RUN_INDEX): the check and the write are one
                # step, whichever process submits.
                cursor = await conn.execute(
                    "INSERT INTO lgos_background_responses "
                    "(id, scope, job, snapshot, idempotency_key, body_digest, "
                    "input_items) VALUES (%s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (scope, idempotency_key) "
                    "WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id",
                    (
                        job.response_id,
                        job.scope,
                        Jsonb(job_json(job), dumps=_dumps),
                        Jsonb(snapshot, dumps=_dumps),
                        idempotency_key,
                        body_digest,
                        Jsonb(input_items or [], dumps=_dumps),
                    ),
                )
                if await cursor.fetchone() is not None:
                    if enqueue is not None:
                        await enqueue(conn)
                    return snapshot, True
        except UniqueViolation as error:
            if job.run_id is not None and error.diag.constraint_name == LIVE_RUN_INDEX:
                raise RunBusyError(job.run_id) from None
            raise
        # A concurrent request with the same key won the insert.
        async with await self._connection() as conn:
            known = await self._by_key(conn, job.scope, idempotency_key)
        if known is None:  # pragma: no cover - a response id collision
            raise RuntimeError(f"response id {job.response_id} already exists")
        return original(known, idempotency_key, body_digest), False

    async def _by_key(self, conn: Any, scope: str, key: str | None) -> Any:
        cursor = await conn.execute(
            "SELECT snapshot, body_digest FROM lgos_background_responses "
            "WHERE scope = %s AND idempotency_key = %s",
            (scope, key),
        )
        return await cursor.fetchone()

    @read_only
    async def drives(self, scope: str, run_id: str) -> bool:
        return await self._one(DRIVES, (scope, run_id)) is not None

    @read_only
    async def get(self, response_id: str, scope: str) -> dict[str, Any] | None:
        row = await self._one(
            "SELECT snapshot FROM lgos_background_responses "
            "WHERE id = %s AND scope = %s",
            (response_id, scope),
        )
        return row["snapshot"] if row else None

    @read_only
    async def job(self, response_id: str) -> BackgroundJob | None:
        row = await self._one(
            "SELECT job FROM lgos_background_responses WHERE id = %s", (response_id,)
        )
        return job_of(row["job"]) if row else None

    async def set_snapshot(
        self,
        response_id: str,
        snapshot: dict[str, Any],
        *,
        enqueue: Enqueue | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> bool:
        from psycopg.types.json import Json, Jsonb

        changed = (
            "UPDATE lgos_background_responses SET snapshot = %s "
            "WHERE id = %s AND NOT (snapshot->>'status' = ANY(%s)) RETURNING id"
        )
        last = (
            "(SELECT coalesce(max(seq), -1) FROM lgos_background_events "
            "WHERE response_id = %s)"
        )
        if enqueue is None:
            # One statement: the events go in only with the new snapshot, and
            # in the order given (json keeps their keys' order).
            query = (
                f"WITH changed AS ({changed}), added AS ("
                "INSERT INTO lgos_background_events (response_id, seq, event) "
                f"SELECT changed.id, {last} + event.n, event.value "
                "FROM changed, json_array_elements(%s::json) "
                "WITH ORDINALITY AS event(value, n)) "
                f"SELECT id, {NOTIFY} FROM changed"
            )
            params: tuple[Any, ...] = (
                Jsonb(snapshot, dumps=_dumps),
                response_id,
                list(TERMINAL_STATUSES),
                response_id,
                Json(events or [], dumps=_dumps),
                response_id,
            )
            return await self._one(query, params) is not None
        query = (
            f"WITH changed AS ({changed}) "
            f"SELECT id, {NOTIFY}, {last} AS last FROM changed"
        )
        params = (
            Jsonb(snapshot, dumps=_dumps),
            response_id,
            list(TERMINAL_STATUSES),
            response_id,
            response_id,
        )
        async with await self._connection() as conn, conn.transaction():
            cursor = await conn.execute(query, params)
            row = await cursor.fetchone()
            if row is None:
                return False
            if events:
                async with conn.cursor() as insert:
                    await insert.executemany(
                        "INSERT INTO lgos_background_events "
                        "(response_id, seq, event) VALUES (%s, %s, %s)",
                        [
                            (response_id, seq, Json(event, dumps=_dumps))
                            for seq, event in enumerate(events, row["last"] + 1)
                        ],
                    )
            await enqueue(conn)
        return True

    async def start_attempt(self, response_id: str) -> Attempt:
        # One round trip: the count, and what the run needs to start. The
        # row's status and flag do not change here, so RETURNING can tell
        # whether this attempt was counted.
        counted = "NOT (cancel_requested OR snapshot->>'status' = ANY(%s))"
        statuses = list(TERMINAL_STATUSES)
        row = await self._one(
            "UPDATE lgos_background_responses SET attempts_started = "
            f"attempts_started + CASE WHEN {counted} THEN 1 ELSE 0 END "
            "WHERE id = %s RETURNING job, snapshot, cancel_requested, "
            "attempts_started - attempts_handed_back "
            f"- CASE WHEN {counted} THEN 1 ELSE 0 END AS lost, "
            "(SELECT coalesce(max(seq), -1) FROM lgos_background_events "
            " WHERE response_id = %s) AS last, "
            f"CASE WHEN attempts_started = 1 AND {counted} "
            "THEN extract(epoch FROM now() - created_at)::float8 END AS waited",
            (statuses, response_id, statuses, response_id, statuses),
        )
        if row is None:
            return Attempt(None, False, lost=0, last_sequence=-1)
        return Attempt(
            row["snapshot"],
            row["cancel_requested"],
            lost=row["lost"],
            last_sequence=row["last"],
            waited=row["waited"],
            job=job_of(row["job"]),
        )

    async def hand_back(self, response_id: str) -> None:
        await self._one(
            "UPDATE lgos_background_responses "
            "SET attempts_handed_back = attempts_handed_back + 1, "
            "snapshot = CASE WHEN snapshot->>'status' = ANY(%s) THEN snapshot "
            "ELSE jsonb_set(snapshot, '{status}', '\"queued\"') END "
            "WHERE id = %s RETURNING id",
            (list(TERMINAL_STATUSES), response_id),
        )

    async def append_events(
        self, response_id: str, events: list[dict[str, Any]]
    ) -> None:
        from psycopg.types.json import Json

        async with await self._connection() as conn, conn.transaction():
            # NOTIFY is delivered at commit, so it rides on the first statement.
            cursor = await conn.execute(
                f"SELECT coalesce(max(seq), -1) AS last, {NOTIFY} "
                "FROM lgos_background_events WHERE response_id = %s",
                (response_id, response_id),
            )
            row = await cursor.fetchone()
            start = row["last"] + 1 if row else 0
            async with conn.cursor() as insert:
                await insert.executemany(
                    "INSERT INTO lgos_background_events (response_id, seq, event) "
                    "VALUES (%s, %s, %s)",
                    [
                        (response_id, start + offset, Json(event, dumps=_dumps))
                        for offset, event in enumerate(events)
                    ],
                )

    def events(self, response_id: str, after: int) -> AsyncIterator[StoredEvent]:
        return self._follower.events(response_id, after)

    async def request_cancel(self, response_id: str) -> bool:
        row = await self._one(
            "UPDATE lgos_background_responses SET cancel_requested = true "
            "WHERE id = %s AND NOT (snapshot->>'status' = ANY(%s)) RETURNING id",
            (response_id, list(TERMINAL_STATUSES)),
        )
        return row is not None

    @read_only
    async def cancel_requested(self, response_id: str) -> bool:
        row = await self._one(
            "SELECT cancel_requested FROM lgos_background_responses WHERE id = %s",
            (response_id,),
        )
        return bool(row and row["cancel_requested"])

    async def save(
        self, scope: str, response: dict[str, Any], input_items: list[dict[str, Any]]
    ) -> None:
        from psycopg.types.json import Jsonb

        row = (
            response["id"],
            scope,
            Jsonb(response, dumps=_dumps),
            Jsonb(input_items, dumps=_dumps),
        )
        await self._saves.save(row)

    @read_only
    async def input_items(
        self, response_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        row = await self._one(
            "SELECT input_items FROM lgos_background_responses "
            "WHERE id = %s AND scope = %s",
            (response_id, scope),
        )
        return row["input_items"] if row else None

    @read_only
    async def chain(self, response_id: str, scope: str) -> list[StoredTurn] | None:
        async with await self._connection() as conn:
            cursor = await conn.execute(CHAIN, (response_id, scope, scope))
            rows = await cursor.fetchall()
        if not rows:
            return None
        return [StoredTurn(row["snapshot"], row["input_items"]) for row in rows]

    @read_only
    async def output_items(
        self, item_ids: Sequence[str], scope: str
    ) -> dict[str, dict[str, Any]]:
        if not item_ids:
            return {}
        from psycopg.types.json import Jsonb

        # One containment test per id, so each uses the GIN index on the
        # outputs' ids (schema migration 6); the items are then picked out
        # of the rows. Every value goes in as a one-row subquery (an
        # InitPlan), which the planner costs without seeing it: the plan of
        # the first calls is then no cheaper than the connection's generic
        # one, which PostgreSQL keeps from the sixth call on. Given the
        # values, it planned each call again (the ids' statistics promise a
        # cheaper plan than the generic one's guess): 0.09 ms a lookup on a
        # million Responses, where the lookup itself takes 0.03 ms.
        wanted = list(dict.fromkeys(item_ids))
        tests = " OR ".join([f"{OUTPUT_IDS} @> (SELECT %s::jsonb)"] * len(wanted))
        async with await self._connection() as conn:
            cursor = await conn.execute(
                "SELECT item FROM lgos_background_responses, "
                "jsonb_array_elements(snapshot->'output') AS item "
                f"WHERE scope = (SELECT %s::text) AND ({tests}) "
                "AND item->>'id' = ANY((SELECT %s::text[])::text[])",
                (scope, *(Jsonb([i]) for i in wanted), wanted),
            )
            rows = await cursor.fetchall()
        return {row["item"]["id"]: row["item"] for row in rows}

    async def delete(self, response_id: str, scope: str) -> bool:
        row = await self._one(
            "DELETE FROM lgos_background_responses "
            "WHERE id = %s AND scope = %s RETURNING id",
            (response_id, scope),
        )
        return row is not None

    async def delete_expired(self, before: dt.datetime) -> int:
        # The retention sweep (``retention_sweep.py``).
        return await delete_expired(self._connection, before, self.sweep_batch)

    async def close(self) -> None:
        """Write the saves still queued and stop listening (the backend
        closes the pool)."""
        await self._saves.close()
        await self._listener.close()

    async def _one(self, query: str, params: tuple[Any, ...]) -> Any:
        async with await self._connection() as conn:
            cursor = await conn.execute(query, params)
            return await cursor.fetchone()


_UNFINISHED = f"""
SELECT count(*) AS unfinished FROM lgos_background_responses
 WHERE scope = %s AND job IS NOT NULL AND {UNFINISHED_BACKGROUND}
"""


async def _within_limit(conn: Any, scope: str, most: int) -> None:
    """Raise ``LimitReached`` when ``scope`` has ``most`` background
    Responses queued or running; the scope's submissions wait for each other
    from here to their commit (a lock of the transaction), so the count
    stays true until this one is stored."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        (f"lgos-background:{scope}",),
    )
    cursor = await conn.execute(_UNFINISHED, (scope,))
    row = await cursor.fetchone()
    if row["unfinished"] >= most:
        raise LimitReached("tenant_background", most)
