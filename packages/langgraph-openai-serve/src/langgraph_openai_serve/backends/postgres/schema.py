"""The PostgreSQL backend's whole schema, as one ordered list of migrations.

A migration's position is its version; ``lgos_migrations`` records the
versions a database has, and ``migrate`` applies the missing ones in order,
each in a transaction with its record, under an advisory lock so processes
setting up at once apply each once (``lgos db-setup`` runs it). Every
statement of the first migrations is idempotent as well: a database set up
before versions were recorded already has their tables, and keeps its rows.

Kept Responses: ``lgos_background_responses`` (named for its first use)
holds background Responses (``job`` set) and, with
``LGOS_RESPONSE_STORE=postgres``, finished foreground ones (``job`` null),
each with the input items its request carried; ``lgos_background_events``
holds the stream events of background runs and goes with its Response
(``ON DELETE CASCADE``); a unique index keeps one queued or running
Response per scope and interrupt run. Conversations: ``lgos_conversations`` and their
items ``lgos_conversation_items``. Batches: ``lgos_batches`` and their lines
``lgos_batch_lines``. The queue's tables are procrastinate's own, and the
checkpoints of durable runs LangGraph's (``backend.py`` sets both up).
"""

from __future__ import annotations

from typing import Any

UNFINISHED_BACKGROUND = "snapshot->>'status' IN ('queued', 'in_progress')"
"""A background Response not yet ended (the predicate of its index)."""
OPEN_BATCH = (
    "batch->>'status' IN ('validating', 'in_progress', 'finalizing', 'cancelling')"
)
"""A batch not yet ended (the predicate of its index)."""
OUTPUT_IDS = "jsonb_path_query_array(snapshot, '$.output[*].id')"
"""The ids of a kept Response's output items (the expression of their index)."""

MIGRATIONS: tuple[str, ...] = (
    # 0: kept and background Responses, with their events.
    """
CREATE TABLE IF NOT EXISTS lgos_background_responses (
    id text PRIMARY KEY,
    scope text NOT NULL,
    job jsonb NOT NULL,
    snapshot jsonb NOT NULL,
    cancel_requested boolean NOT NULL DEFAULT false,
    idempotency_key text,
    body_digest text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS lgos_background_idempotency
    ON lgos_background_responses (scope, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
ALTER TABLE lgos_background_responses
    ADD COLUMN IF NOT EXISTS attempts_started integer NOT NULL DEFAULT 0;
ALTER TABLE lgos_background_responses
    ADD COLUMN IF NOT EXISTS attempts_handed_back integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS lgos_background_run
    ON lgos_background_responses ((job->>'run_id'))
    WHERE job->>'run_id' IS NOT NULL;
CREATE TABLE IF NOT EXISTS lgos_background_events (
    response_id text NOT NULL
        REFERENCES lgos_background_responses (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    frame bytea NOT NULL,
    PRIMARY KEY (response_id, seq)
);
ALTER TABLE lgos_background_events ADD COLUMN IF NOT EXISTS event json;
ALTER TABLE lgos_background_events ALTER COLUMN frame DROP NOT NULL;
ALTER TABLE lgos_background_responses ALTER COLUMN job DROP NOT NULL;
ALTER TABLE lgos_background_responses
    ADD COLUMN IF NOT EXISTS input_items jsonb NOT NULL DEFAULT '[]';
CREATE INDEX IF NOT EXISTS lgos_responses_created
    ON lgos_background_responses (created_at);
""",
    # 1: Conversations and their items.
    """
CREATE TABLE IF NOT EXISTS lgos_conversations (
    id text PRIMARY KEY,
    scope text NOT NULL,
    metadata jsonb NOT NULL,
    created_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS lgos_conversation_items (
    conversation_id text NOT NULL
        REFERENCES lgos_conversations (id) ON DELETE CASCADE,
    item_id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    item jsonb NOT NULL,
    PRIMARY KEY (conversation_id, item_id)
);
CREATE INDEX IF NOT EXISTS lgos_conversation_items_order
    ON lgos_conversation_items (conversation_id, seq);
ALTER TABLE lgos_conversation_items ADD COLUMN IF NOT EXISTS response_id text;
ALTER TABLE lgos_conversations ADD COLUMN IF NOT EXISTS turn_holder text;
ALTER TABLE lgos_conversations ADD COLUMN IF NOT EXISTS turn_expires_at timestamptz;
""",
    # 2: batches and their lines.
    """
CREATE TABLE IF NOT EXISTS lgos_batches (
    id text PRIMARY KEY,
    scope text NOT NULL,
    batch jsonb NOT NULL,
    ending text,
    chunks integer NOT NULL DEFAULT 0,
    next_chunk integer NOT NULL DEFAULT 0,
    completed integer NOT NULL DEFAULT 0,
    failed integer NOT NULL DEFAULT 0,
    input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    cached_tokens bigint NOT NULL DEFAULT 0,
    reasoning_tokens bigint NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS lgos_batches_scope ON lgos_batches (scope, id);
CREATE INDEX IF NOT EXISTS lgos_batches_open ON lgos_batches
    (((batch->>'expires_at')::bigint))
    WHERE batch->>'status' IN ('validating', 'in_progress');
CREATE TABLE IF NOT EXISTS lgos_batch_lines (
    batch_id text NOT NULL REFERENCES lgos_batches (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    line integer NOT NULL,
    custom_id text NOT NULL,
    body text NOT NULL,
    result text,
    failed boolean NOT NULL DEFAULT false,
    PRIMARY KEY (batch_id, seq)
);
""",
    # 3: a tenant's unfinished background Responses and open batches, counted
    # against its limits at each submission.
    f"""
CREATE INDEX IF NOT EXISTS lgos_responses_unfinished
    ON lgos_background_responses (scope)
    WHERE job IS NOT NULL AND {UNFINISHED_BACKGROUND};
CREATE INDEX IF NOT EXISTS lgos_batches_open_by_scope
    ON lgos_batches (scope) WHERE {OPEN_BATCH};
""",
    # 4: kept Responses found by the id of an output item (item_reference).
    """
CREATE INDEX IF NOT EXISTS lgos_responses_output_items
    ON lgos_background_responses USING gin ((snapshot->'output') jsonb_path_ops);
""",
    # 5: one live Response per scope and interrupt run, kept by the
    # database: two submits racing past a check could both be stored (the
    # loser then failed a moment later), and the check looked across scopes.
    # A live duplicate left by that race (all but the oldest) ends failed,
    # as its run would have, so the index can be built.
    f"""
UPDATE lgos_background_responses
SET snapshot = snapshot || jsonb_build_object(
    'status', 'failed',
    'error', jsonb_build_object(
        'code', 'run_busy',
        'message', 'Another request is already running this operation.'))
WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (
            PARTITION BY scope, job->>'run_id' ORDER BY created_at, id
        ) AS place
        FROM lgos_background_responses
        WHERE job->>'run_id' IS NOT NULL AND {UNFINISHED_BACKGROUND}
    ) live WHERE place > 1
);
DROP INDEX IF EXISTS lgos_background_run;
CREATE UNIQUE INDEX IF NOT EXISTS lgos_background_live_run
    ON lgos_background_responses (scope, (job->>'run_id'))
    WHERE job->>'run_id' IS NOT NULL AND {UNFINISHED_BACKGROUND};
""",
    # 6: output items found by their ids alone (item_reference), written
    # straight into the index. Migration 4 indexed every path and value of
    # every output, through GIN's pending list: a lookup read the whole list
    # (up to 4 MB) until a vacuum emptied it, and on a large table
    # autovacuum comes once per 20% of its size in inserts, so lookups
    # slowed as the store grew (1 ms beside a million Responses, 0.04 ms on
    # an empty store). The build locks writes of kept Responses for about
    # 10 s per million; ANALYZE gives the planner the expression's
    # statistics at once.
    f"""
DROP INDEX IF EXISTS lgos_responses_output_items;
CREATE INDEX IF NOT EXISTS lgos_responses_output_ids
    ON lgos_background_responses USING gin (({OUTPUT_IDS}) jsonb_path_ops)
    WITH (fastupdate = off);
ANALYZE lgos_background_responses;
""",
    # 7: a turn's items found by their Response. Appending a turn first
    # removes what an earlier attempt of the same Response added; the only
    # index to find them by was the Conversation's order, so the delete
    # read every item of the Conversation, and a long Conversation's items
    # lie one to a page among everyone else's (a Conversation of 200 read
    # 200 pages on a grown store, 14 on an empty one).
    """
CREATE INDEX IF NOT EXISTS lgos_conversation_items_turn
    ON lgos_conversation_items (conversation_id, response_id)
    WHERE response_id IS NOT NULL;
""",
)

_LOCK = 0x6C676F735F6D6967  # pg advisory lock key: one migrator at a time

_VERSIONS = """
CREATE TABLE IF NOT EXISTS lgos_migrations (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


def statements(migration: str) -> list[str]:
    """A migration's statements, one at a time (the pool prepares each)."""
    return [part.strip() for part in migration.split(";") if part.strip()]


async def migrate(conn: Any) -> list[int]:
    """Apply the migrations ``conn``'s database lacks; the versions applied."""
    await conn.execute(_VERSIONS)
    applied: list[int] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        cursor = await conn.execute(
            "SELECT coalesce(max(version), -1) AS version FROM lgos_migrations"
        )
        row = await cursor.fetchone()
        current = row["version"] if isinstance(row, dict) else row[0]
        for version in range(current + 1, len(MIGRATIONS)):
            for statement in statements(MIGRATIONS[version]):
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO lgos_migrations (version) VALUES (%s)", (version,)
            )
            applied.append(version)
    return applied
