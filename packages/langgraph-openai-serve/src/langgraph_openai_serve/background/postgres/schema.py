"""The tables of kept Responses, created and migrated by ``setup()``.

One table family keeps every Response: ``lgos_background_responses`` (named
for its first use) holds background Responses (``job`` set) and, with
``LGOS_RESPONSE_STORE=postgres``, finished foreground ones (``job`` null),
each with the input items its request carried; ``lgos_background_events``
holds the stream events of background runs and goes with its Response
(``ON DELETE CASCADE``). Conversations, a resource of their own, have
``lgos_conversations`` and their items ``lgos_conversation_items``
(``conversations/postgres.py``). Every statement is idempotent, so ``lgos db-setup``
migrates an existing database in place and keeps its rows.
"""

from __future__ import annotations

SCHEMA = """
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
"""
