"""The retention sweep of kept Responses on PostgreSQL (``lgos
responses-cleanup``): it deletes the finished Responses created before a
cutoff, with their stream events (``ON DELETE CASCADE``).

A sweep, not a request: on a large store it may take long, so it goes
oldest first in batches, each a statement of its own (autocommit: its own
short transaction). A row is held only while its batch is deleted (a submit
reusing an expired Idempotency-Key waits for one batch, not the sweep), a
sweep cut short keeps what it deleted, and rows another sweep holds are
left to it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph_openai_serve.responses.protocol import TERMINAL_STATUSES

SWEEP_BATCH = 1000
"""Expired Responses the retention sweep deletes per transaction: 34 ms of
work on average with their events, 0.44 s at worst (``lgos-bench
growth``, a million expired), so no row it takes is held longer."""

# One batch: the oldest finished Responses created before the cutoff, from
# where the last batch reached (through the created_at index, so every batch
# starts where the previous one ended, not over the index entries of the
# rows it deleted); rows another transaction holds are skipped. How many
# went, and the newest creation among them.
EXPIRED_BATCH = """
WITH doomed AS (
    SELECT id FROM lgos_background_responses
    WHERE created_at < %(before)s AND created_at >= %(since)s
    AND snapshot->>'status' = ANY(%(ended)s)
    ORDER BY created_at LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM lgos_background_responses r USING doomed
    WHERE r.id = doomed.id RETURNING r.created_at
)
SELECT count(*) AS deleted, max(created_at) AS reached FROM gone
"""


async def delete_expired(
    connection: Callable[..., Awaitable[Any]], before: dt.datetime, batch: int
) -> int:
    """Delete the finished Responses created before ``before``, ``batch``
    per transaction, on a connection of ``connection`` (a ``Database``'s,
    with no deadline: the sweep may rightly run long); how many went."""
    deleted = 0
    since = dt.datetime.min.replace(tzinfo=dt.UTC)
    async with await connection(deadline=None) as conn:
        while True:
            cursor = await conn.execute(
                EXPIRED_BATCH,
                {
                    "before": before,
                    "since": since,
                    "ended": list(TERMINAL_STATUSES),
                    "batch": batch,
                },
            )
            row = await cursor.fetchone()
            went = int(row["deleted"])
            deleted += went
            if went < batch:
                return deleted
            since = row["reached"]
