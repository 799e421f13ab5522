"""The queue's statistics on procrastinate's tables, read at each scrape.

Per tenant and priority: the jobs waiting and due (``ready``), those
running, and how long the oldest ready one has waited since it was queued
or put back (its last ``deferred``, ``deferred_for_retry`` or ``retried``
event, or its schedule if later).

A scrape must stay cheap however long the queue, so no waiting job is
read one by one unless it can be the oldest or is left out of ``ready``.
The waiting jobs per (tenant, priority) are counted by the database as they
come and go (``queue_counts.py``); the jobs scheduled for later, left out
of them, are few (``lgos_jobs_waiting_again`` indexes the jobs put back on
the queue or scheduled) and each is read. Of a line's jobs queued once and
never scheduled, the first by id is the one queued first (ids are given in
the order jobs are queued; the event's time is the start of the
transaction that queued it, so a later id may read older by at most that
transaction's length): its event alone is read. The running jobs are the
fleet's slots at most.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.backends.postgres.fair_fetch import QUEUE, TENANT_ARG
from langgraph_openai_serve.backends.postgres.queue_counts import (
    FOLD_AFTER,
    WAITING_COUNTS,
    fold_changes,
)
from langgraph_openai_serve.jobs.protocol import work_kind
from langgraph_openai_serve.observability.queue import QueueStats, WorkCount

_TENANT = f"coalesce(j.args->>'{TENANT_ARG}', '')"
_SINCE = """(SELECT max(e.at) FROM procrastinate_events AS e
    WHERE e.job_id = {job}
    AND e.type IN ('deferred', 'deferred_for_retry', 'retried'))"""
_WAITING = f"j.status = 'todo' AND j.queue_name = '{QUEUE}'"
_FIRST = f"""(
    SELECT j.id FROM procrastinate_jobs AS j
     WHERE {_WAITING} AND {_TENANT} = kind.tenant AND j.priority = kind.priority
       AND j.attempts = 0 AND j.scheduled_at IS NULL
     ORDER BY j.id LIMIT 1)"""
"""The first job of a line (``kind``) that was queued once and never
scheduled."""

QUEUE_STATS = f"""
WITH {WAITING_COUNTS},
waiting AS (
    SELECT kind.tenant, kind.priority, kind.jobs,
        {_SINCE.format(job=_FIRST)} AS first_since
    FROM waiting_counts AS kind
),
again AS (
    SELECT {_TENANT} AS tenant, j.priority,
        coalesce(j.scheduled_at > now(), false) AS later,
        greatest(j.scheduled_at, {_SINCE.format(job="j.id")}) AS since
    FROM procrastinate_jobs AS j
    WHERE {_WAITING} AND (j.attempts > 0 OR j.scheduled_at IS NOT NULL)
),
running AS (
    SELECT {_TENANT} AS tenant, j.priority, count(*) AS jobs
    FROM procrastinate_jobs AS j
    WHERE j.status = 'doing' AND j.queue_name = '{QUEUE}'
    GROUP BY 1, 2
),
kinds AS (
    SELECT tenant, priority FROM waiting
    UNION SELECT tenant, priority FROM running
)
SELECT noted.changes, kinds.priority, kinds.tenant,
    coalesce(waiting.jobs, 0) - (
        SELECT count(*) FROM again
         WHERE again.tenant = kinds.tenant AND again.priority = kinds.priority
           AND again.later
    ) AS ready,
    coalesce(running.jobs, 0) AS running,
    extract(epoch FROM now() - least(waiting.first_since, (
        SELECT min(again.since) FROM again
         WHERE again.tenant = kinds.tenant AND again.priority = kinds.priority
           AND NOT again.later
    )))::float8 AS oldest
FROM (SELECT count(*) AS changes FROM lgos_queue_waiting_changes) AS noted
LEFT JOIN kinds ON true
LEFT JOIN waiting USING (tenant, priority)
LEFT JOIN running USING (tenant, priority)
"""
"""A row per (tenant, priority) with jobs waiting or running (one with
none when none is), each with the changes to the counts not folded yet."""


async def queue_stats(conn: Any) -> QueueStats:
    """The queue's statistics, read on ``conn`` (a dict-row connection)."""
    cursor = await conn.execute(QUEUE_STATS)
    rows = await cursor.fetchall()
    if rows[0]["changes"] > FOLD_AFTER:
        await fold_changes(conn)
    rows = [row for row in rows if row["priority"] is not None]
    work = tuple(
        WorkCount(
            work_kind(row["priority"]), row["tenant"], row["ready"], row["running"]
        )
        for row in rows
    )
    return QueueStats(
        sum(count.ready for count in work),
        sum(count.running for count in work),
        max((row["oldest"] or 0.0 for row in rows), default=0.0),
        work,
    )
