"""The rows of kept Responses (``lgos_background_responses``): the queries
that read a followed stream and a chain, and a job as its row keeps it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from langgraph_openai_serve.backends.postgres.schema import UNFINISHED_BACKGROUND
from langgraph_openai_serve.responses.errors import IdempotencyKeyReusedError
from langgraph_openai_serve.responses.protocol import BackgroundJob

LIVE_RUN_INDEX = "lgos_background_live_run"
"""The unique index that keeps one live Response per scope and interrupt run
(a migration of ``schema.py``): a second one's INSERT fails on it."""

# Whether a live Response of the scope drives the run: the index's own
# predicate, so PostgreSQL answers from the index.
DRIVES = f"""
SELECT 1 AS live FROM lgos_background_responses
WHERE scope = %s AND job->>'run_id' = %s
AND job->>'run_id' IS NOT NULL AND {UNFINISHED_BACKGROUND}
LIMIT 1
"""

# A followed Response's status and its events after a sequence number: one
# row with no event when there is none yet, no row when it is gone.
FOLLOW = """
SELECT r.snapshot->>'status' AS status, e.seq, e.event
FROM lgos_background_responses r
LEFT JOIN lgos_background_events e ON e.response_id = r.id AND e.seq > %s
WHERE r.id = %s
ORDER BY e.seq
"""

# The Response and its ancestors, oldest first; the walk stays in the scope.
# Each step reads its parent by id: one primary-key probe a step, whatever
# the planner thinks of the table's size (a join, or a subquery it can pull
# up into one, let it hash the whole table while the table was small; the
# LIMIT keeps the subquery a probe).
CHAIN = """
WITH RECURSIVE chain AS (
    SELECT id, snapshot, input_items, 0 AS depth
    FROM lgos_background_responses WHERE id = %s AND scope = %s
    UNION ALL
    SELECT parent.id, parent.snapshot, parent.input_items, chain.depth + 1
    FROM chain CROSS JOIN LATERAL (
        SELECT r.id, r.snapshot, r.input_items FROM lgos_background_responses r
        WHERE r.id = chain.snapshot->>'previous_response_id' AND r.scope = %s
        LIMIT 1
    ) AS parent
)
SELECT snapshot, input_items FROM chain ORDER BY depth DESC
"""


def original(
    row: Any, idempotency_key: str | None, body_digest: str | None
) -> dict[str, Any]:
    if row["body_digest"] != body_digest:
        raise IdempotencyKeyReusedError(idempotency_key or "")
    stored: dict[str, Any] = row["snapshot"]
    return stored


def job_of(stored: dict[str, Any] | None) -> BackgroundJob | None:
    return BackgroundJob(**stored) if stored else None


def job_json(job: BackgroundJob) -> dict[str, Any]:
    return {
        "response_id": job.response_id,
        "scope": job.scope,
        "body": job.body,
        "run_id": job.run_id,
        "trace": job.trace,
    }


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
