"""The waiting jobs' counts, kept by the database as jobs come and go.

A scrape reads how many jobs wait per (tenant, priority); counting them on
procrastinate's table reads every waiting job (25 ms at 100,000). Instead
triggers on ``procrastinate_jobs`` note each statement's change to the
waiting jobs of the LGOS queue as rows of ``lgos_queue_waiting_changes``
(one per (tenant, priority) a statement changed, with its +/- count), and
``lgos_queue_waiting_counts`` holds the changes folded so far: the waiting
jobs of a pair are the sum of its rows in both, exact in any snapshot.

The triggers only insert (no row is updated by two transactions, so a
submit and a take never wait on each other's counts, as they would on one
counter row per pair until commit); a read folds the changes into the
counts once there are ``FOLD_AFTER`` of them (``fold_changes``), so what a
read sums grows with the traffic between two scrapes, not with the queue;
a worker's stalled-job sweep folds them too (``fold_when_due``), so they
stay few where nothing scrapes.

The tables and triggers are put in place by ``lgos db-setup`` after
procrastinate's schema (``install_counts``), the counts started from the
jobs waiting then, under a lock that holds off writes to the queue table
for that moment.
"""

from __future__ import annotations

from typing import Any

from psycopg.rows import tuple_row

from langgraph_openai_serve.backends.postgres.fair_fetch import QUEUE, TENANT_ARG

FOLD_AFTER = 200
"""Change rows a read leaves unfolded: past them, it folds them."""
_FOLD_LOCK = 0x6C67_6F73_7163  # "lgosqc": one folder at a time
_TENANT = f"coalesce(jobs.args->>'{TENANT_ARG}', '')"
_WAITING = f"jobs.status = 'todo' AND jobs.queue_name = '{QUEUE}'"

_TABLES = (
    """CREATE TABLE IF NOT EXISTS lgos_queue_waiting_counts (
    tenant text NOT NULL,
    priority integer NOT NULL,
    jobs bigint NOT NULL,
    PRIMARY KEY (tenant, priority)
)""",
    """CREATE TABLE IF NOT EXISTS lgos_queue_waiting_changes (
    tenant text NOT NULL,
    priority integer NOT NULL,
    jobs bigint NOT NULL
)""",
)

_FUNCTION = f"""CREATE OR REPLACE FUNCTION lgos_note_waiting_jobs() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM lgos_queue_waiting_changes;
        DELETE FROM lgos_queue_waiting_counts;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO lgos_queue_waiting_changes (tenant, priority, jobs)
        SELECT {_TENANT}, jobs.priority, count(*) FROM lgos_new_jobs AS jobs
         WHERE {_WAITING} GROUP BY 1, 2;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO lgos_queue_waiting_changes (tenant, priority, jobs)
        SELECT {_TENANT}, jobs.priority, -count(*) FROM lgos_old_jobs AS jobs
         WHERE {_WAITING} GROUP BY 1, 2;
    ELSE
        INSERT INTO lgos_queue_waiting_changes (tenant, priority, jobs)
        SELECT tenant, priority, sum(change) FROM (
            SELECT {_TENANT} AS tenant, jobs.priority, 1 AS change
              FROM lgos_new_jobs AS jobs WHERE {_WAITING}
            UNION ALL
            SELECT {_TENANT}, jobs.priority, -1
              FROM lgos_old_jobs AS jobs WHERE {_WAITING}
        ) AS changed GROUP BY 1, 2 HAVING sum(change) <> 0;
    END IF;
    RETURN NULL;
END
$$"""
"""Each statement's change to the waiting jobs, from its transition tables
(a statement-level trigger: one insert for a statement however many jobs
it queued or took)."""

TRIGGERS = {
    "lgos_note_waiting_jobs_insert": "AFTER INSERT ON procrastinate_jobs "
    "REFERENCING NEW TABLE AS lgos_new_jobs",
    "lgos_note_waiting_jobs_update": "AFTER UPDATE ON procrastinate_jobs "
    "REFERENCING OLD TABLE AS lgos_old_jobs NEW TABLE AS lgos_new_jobs",
    "lgos_note_waiting_jobs_delete": "AFTER DELETE ON procrastinate_jobs "
    "REFERENCING OLD TABLE AS lgos_old_jobs",
    "lgos_note_waiting_jobs_truncate": "AFTER TRUNCATE ON procrastinate_jobs",
}
"""The triggers on procrastinate's table, by name."""

_START = f"""INSERT INTO lgos_queue_waiting_counts (tenant, priority, jobs)
SELECT {_TENANT}, jobs.priority, count(*) FROM procrastinate_jobs AS jobs
 WHERE {_WAITING} GROUP BY 1, 2"""

WAITING_COUNTS = """
waiting_counts AS (
    SELECT tenant, priority, sum(jobs)::bigint AS jobs FROM (
        SELECT tenant, priority, jobs FROM lgos_queue_waiting_counts
        UNION ALL
        SELECT tenant, priority, jobs FROM lgos_queue_waiting_changes
    ) AS noted
    GROUP BY 1, 2 HAVING sum(jobs) > 0
)"""
"""The jobs waiting per (tenant, priority), as the counts and the changes
not folded yet say (a CTE)."""

_FOLD = """
WITH folded AS (
    DELETE FROM lgos_queue_waiting_changes RETURNING tenant, priority, jobs
)
INSERT INTO lgos_queue_waiting_counts AS counts (tenant, priority, jobs)
SELECT tenant, priority, sum(jobs) FROM folded GROUP BY 1, 2 ORDER BY 1, 2
ON CONFLICT (tenant, priority) DO UPDATE SET jobs = counts.jobs + excluded.jobs
"""


async def install_counts(conn: Any) -> None:
    """The tables, function and triggers on ``conn`` (autocommit), the
    counts started from the jobs waiting; idempotent, and safe when two
    setups run at once (the second finds the triggers in place)."""
    for statement in (*_TABLES, _FUNCTION):
        await conn.execute(statement)
    if await _installed(conn):
        return
    async with conn.transaction():
        # No job is queued, taken or dropped between the count and the
        # triggers (reads go on).
        await conn.execute("LOCK TABLE procrastinate_jobs IN SHARE ROW EXCLUSIVE MODE")
        if await _installed(conn):
            return
        await conn.execute("DELETE FROM lgos_queue_waiting_changes")
        await conn.execute("DELETE FROM lgos_queue_waiting_counts")
        await conn.execute(_START)
        for name, when in TRIGGERS.items():
            await conn.execute(
                f"CREATE TRIGGER {name} {when} "
                "FOR EACH STATEMENT EXECUTE FUNCTION lgos_note_waiting_jobs()"
            )


async def _installed(conn: Any) -> bool:
    cursor = await conn.execute(
        "SELECT count(*) AS triggers FROM pg_trigger "
        "WHERE tgrelid = 'procrastinate_jobs'::regclass AND tgname = ANY(%s)",
        (list(TRIGGERS),),
    )
    row = await cursor.fetchone()
    return bool(row["triggers"] == len(TRIGGERS))


async def fold_changes(conn: Any) -> None:
    """Fold the changes noted so far into the counts, unless another
    connection is folding them now (``conn`` in autocommit, any row type)."""
    async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cursor:
        await cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", (_FOLD_LOCK,))
        row = await cursor.fetchone()
        if row is not None and row[0]:
            await cursor.execute(_FOLD)


async def fold_when_due(conn: Any) -> None:
    """Fold the changes if more than ``FOLD_AFTER`` wait: a worker's sweep
    calls it, so the changes stay few where nothing scrapes the metrics."""
    async with conn.cursor(row_factory=tuple_row) as cursor:
        await cursor.execute("SELECT count(*) FROM lgos_queue_waiting_changes")
        row = await cursor.fetchone()
    if row is not None and row[0] > FOLD_AFTER:
        await fold_changes(conn)
