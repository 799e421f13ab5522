"""The data of ``lgos-bench growth``, made by PostgreSQL itself.

A long-lived deployment's tables, written with ``INSERT ... SELECT ...
generate_series`` (a million kept Responses take about a minute, where the
API would take hours): kept Responses in chains (``previous_response_id``),
a tenth of them background Responses with an Idempotency-Key and their
stream events; Conversations with their items; a tenant's batches; waiting
jobs on procrastinate's table (the insert triggers add their events, as a
deferral does). Rows go in in the order a deployment writes them: the turns
of all chains and Conversations interleaved, so one chain's Responses or one
Conversation's items are spread over the table as they would be, not packed
together.

Every id is a function of what it names (tenant, chain, turn ...), so the
empty database (``Shape.empty``: the subject's own rows, nothing else but
one job of each tenant and kind) and the grown one hold the same subject:
the same chain, Conversation and batches of ``tenant-0``, which the
operations measured read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.numeric import Int8

Log = Callable[[str], None]

SUBJECT = "tenant-0"
"""The tenant whose rows the measured operations read and write."""
DAYS_OLD = 40
"""The generated Responses' age: past the default retention (30 days), so
``lgos responses-cleanup`` finds every one of them expired."""
INTERACTIVE_PER_TENANT = 100
"""Background Responses queued per tenant, under the default limit of 128
(``LGOS_TENANT_MAX_BACKGROUND``): the rest of the waiting jobs are batch
lines."""
RECENT = 10_000
"""Responses the grown database keeps after its vacuum (``Shape.recent``)."""
RUNNING_JOBS = 8
"""Jobs a (silent) worker holds, for the fetch's count of running jobs."""


@dataclass(frozen=True, slots=True)
class Sizes:
    """How much of everything a database holds."""

    responses: int = 1_000_000
    tenants: int = 8
    chain: int = 20
    """Responses per chain; the subject is chain 0's last."""
    conversations: int = 10_000
    items: int = 200
    """Items per Conversation (a turn adds two)."""
    jobs: int = 100_000
    """Waiting jobs, over every tenant."""
    batches: int = 10_000
    """Batches, over every tenant."""

    def __post_init__(self) -> None:
        if self.tenants < 1 or self.chain < 1 or self.items < 2:
            raise ValueError("tenants and chain must be positive, items 2 or more")
        if self.responses < self.chain:
            raise ValueError(f"responses: at least one chain ({self.chain})")
        if self.conversations < 1 or self.jobs < 0:
            raise ValueError("conversations: at least 1; jobs: not negative")
        if self.batches < 5 * self.tenants:
            raise ValueError("batches: at least 5 per tenant")


@dataclass(frozen=True, slots=True)
class Shape:
    """What ``build`` writes: the rows of ``Sizes``, or the subject's own."""

    chains: int
    chain: int
    tenants: int
    conversations: int
    items: int
    batch_tenants: int
    """Tenants given batches (the first ones)."""
    batches_per_tenant: int
    interactive_per_tenant: int
    lines: int
    """Waiting batch lines, over every tenant."""
    lines_per_batch: int
    recent: int = 0
    """Responses kept after the vacuum: autovacuum vacuums a table once
    20% of it was inserted since the last time (200,000 rows of a million),
    so a large store always holds rows no vacuum has seen yet (with their
    index entries, a GIN index's pending list among them)."""

    @classmethod
    def grown(cls, sizes: Sizes) -> Shape:
        interactive = min(INTERACTIVE_PER_TENANT, sizes.jobs // (2 * sizes.tenants))
        return cls(
            chains=sizes.responses // sizes.chain,
            chain=sizes.chain,
            tenants=sizes.tenants,
            conversations=sizes.conversations,
            items=sizes.items,
            batch_tenants=sizes.tenants,
            batches_per_tenant=sizes.batches // sizes.tenants,
            interactive_per_tenant=interactive,
            lines=sizes.jobs - interactive * sizes.tenants,
            lines_per_batch=50,
            recent=min(RECENT, sizes.responses // 10),
        )

    @classmethod
    def empty(cls, sizes: Sizes) -> Shape:
        """The subject's own rows: one chain, one Conversation, the subject
        tenant's batches. The queue keeps its shape with one job of each
        tenant and kind: the fetch visits each (tenant, kind) waiting once
        by design, so its cost grows with them, and what is asked here is
        whether it grows with the jobs."""
        return cls(
            chains=1,
            chain=sizes.chain,
            tenants=sizes.tenants,
            conversations=1,
            items=sizes.items,
            batch_tenants=1,
            batches_per_tenant=sizes.batches // sizes.tenants,
            interactive_per_tenant=1 if sizes.jobs else 0,
            lines=sizes.tenants if sizes.jobs else 0,
            lines_per_batch=1,
        )


def response_id(chain: int, turn: int) -> str:
    return "resp_" + _md5(f"r{chain}:{turn}")


def conversation_id(number: int) -> str:
    return "conv_" + _md5(f"c{number}")


def _md5(text: str) -> str:
    import hashlib

    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


# The same ids in SQL (md5 of the same text).
_RESPONSE_ID = "'resp_' || md5('r' || {chain} || ':' || {turn})"
_TEXT = "repeat(md5(({seed})::text), 6)"
"""192 characters of text, different for each seed."""

_RESPONSES = f"""
INSERT INTO lgos_background_responses
    (id, scope, job, snapshot, idempotency_key, body_digest, input_items,
     created_at)
SELECT {_RESPONSE_ID.format(chain="c", turn="t")},
    'tenant-' || (c %% %(tenants)s),
    CASE WHEN background THEN jsonb_build_object(
        'response_id', {_RESPONSE_ID.format(chain="c", turn="t")},
        'scope', 'tenant-' || (c %% %(tenants)s),
        'body', jsonb_build_object('model', 'bench-plain', 'input', 'hello'),
        'run_id', NULL, 'trace', '{{}}'::jsonb) END,
    jsonb_build_object(
        'id', {_RESPONSE_ID.format(chain="c", turn="t")},
        'object', 'response', 'created_at', 1700000000 + k,
        'status', 'completed', 'background', background, 'error', NULL,
        'incomplete_details', NULL, 'instructions', NULL,
        'max_output_tokens', NULL, 'model', 'bench-plain',
        'output', jsonb_build_array(jsonb_build_object(
            'id', 'msg_' || md5('o' || k), 'type', 'message',
            'status', 'completed', 'role', 'assistant',
            'content', jsonb_build_array(jsonb_build_object(
                'type', 'output_text', 'text', {_TEXT.format(seed="k")},
                'annotations', '[]'::jsonb, 'logprobs', '[]'::jsonb)))),
        'parallel_tool_calls', true,
        'previous_response_id', CASE WHEN t > 0
            THEN {_RESPONSE_ID.format(chain="c", turn="t - 1")} END,
        'reasoning', jsonb_build_object('effort', NULL, 'summary', NULL),
        'store', true, 'temperature', 1.0,
        'text', jsonb_build_object('format', jsonb_build_object('type', 'text')),
        'tool_choice', 'auto', 'tools', '[]'::jsonb, 'top_p', 1.0,
        'truncation', 'disabled',
        'usage', jsonb_build_object('input_tokens', 40, 'output_tokens', 48,
            'total_tokens', 88,
            'input_tokens_details', jsonb_build_object('cached_tokens', 0),
            'output_tokens_details', jsonb_build_object('reasoning_tokens', 0)),
        'user', NULL, 'metadata', '{{}}'::jsonb),
    CASE WHEN background THEN 'idem-' || c || '-' || t END,
    CASE WHEN background THEN md5('d' || k) END,
    jsonb_build_array(
        jsonb_build_object('id', 'msg_' || md5('d' || k), 'type', 'message',
            'role', 'developer', 'status', 'completed',
            'content', jsonb_build_array(jsonb_build_object(
                'type', 'input_text', 'text', 'Answer briefly.'))),
        jsonb_build_object('id', 'msg_' || md5('i' || k), 'type', 'message',
            'role', 'user', 'status', 'completed',
            'content', jsonb_build_array(jsonb_build_object(
                'type', 'input_text', 'text', {_TEXT.format(seed="-k")})))),
    now() - interval '{DAYS_OLD} days' + k * interval '1 millisecond'
FROM generate_series(0, %(responses)s - 1) AS k,
    LATERAL (SELECT k %% %(chains)s AS c, k / %(chains)s AS t) AS place,
    LATERAL (SELECT c %% 10 = 9 AS background) AS kind
ORDER BY k
"""
"""Chains interleaved: row k is turn k / chains of chain k %% chains."""

_EVENTS = """
INSERT INTO lgos_background_events (response_id, seq, event)
SELECT r.id, e.seq, json_build_object('type', 'response.output_text.delta',
    'sequence_number', e.seq, 'delta', 'word')
FROM lgos_background_responses r, generate_series(0, 2) AS e(seq)
WHERE r.job IS NOT NULL
"""

_CONVERSATIONS = """
INSERT INTO lgos_conversations (id, scope, metadata, created_at)
SELECT 'conv_' || md5('c' || n), 'tenant-' || (n %% %(tenants)s),
    '{}'::jsonb, 1700000000 + n
FROM generate_series(0, %(conversations)s - 1) AS n
"""

_ITEMS = f"""
INSERT INTO lgos_conversation_items (conversation_id, response_id, item_id, item)
SELECT 'conv_' || md5('c' || n), 'resp_' || md5('cr' || n || ':' || (i / 2)),
    'msg_' || md5('ci' || n || ':' || i),
    jsonb_build_object('id', 'msg_' || md5('ci' || n || ':' || i),
        'type', 'message', 'status', 'completed',
        'role', CASE WHEN i %% 2 = 0 THEN 'user' ELSE 'assistant' END,
        'content', jsonb_build_array(jsonb_build_object(
            'type', CASE WHEN i %% 2 = 0 THEN 'input_text' ELSE 'output_text' END,
            'text', {_TEXT.format(seed="n * 1000 + i")})))
FROM generate_series(0, %(conversations)s * %(items)s - 1) AS k,
    LATERAL (SELECT k %% %(conversations)s AS n, k / %(conversations)s AS i) AS place
ORDER BY k
"""
"""Turns interleaved: item k is item k / conversations of Conversation
k %% conversations."""

_BATCHES = """
INSERT INTO lgos_batches (id, scope, batch, ending, chunks, next_chunk,
    completed, input_tokens, output_tokens)
SELECT 'batch_' || md5('b' || t || ':' || j), 'tenant-' || t,
    jsonb_build_object(
        'id', 'batch_' || md5('b' || t || ':' || j),
        'object', 'batch', 'endpoint', '/v1/responses', 'errors', NULL,
        'input_file_id', 'file-' || md5('f' || k), 'completion_window', '24h',
        'status', 'completed', 'output_file_id', 'file-' || md5('g' || k),
        'error_file_id', NULL, 'created_at', 1700000000 + k,
        'in_progress_at', 1700000001 + k, 'expires_at', 1700086400 + k,
        'finalizing_at', 1700000100 + k, 'completed_at', 1700000120 + k,
        'failed_at', NULL, 'expired_at', NULL, 'cancelling_at', NULL,
        'cancelled_at', NULL, 'request_counts', jsonb_build_object('total', 100),
        'metadata', '{}'::jsonb, 'model', 'bench-plain'),
    'completed', 4, 4, 100, 4000, 4800
FROM generate_series(0, %(batch_tenants)s * %(batches_per_tenant)s - 1) AS k,
    LATERAL (SELECT k %% %(batch_tenants)s AS t, k / %(batch_tenants)s AS j) AS place
"""
"""Batch j of tenant t: the same ids in the empty database and the grown."""

_INTERACTIVE = """
WITH queued AS (
    INSERT INTO lgos_background_responses (id, scope, job, snapshot, input_items)
    SELECT 'resp_' || md5('q' || k), 'tenant-' || (k %% %(tenants)s),
        jsonb_build_object('response_id', 'resp_' || md5('q' || k),
            'scope', 'tenant-' || (k %% %(tenants)s),
            'body', jsonb_build_object('model', 'bench-plain', 'input', 'hello'),
            'run_id', NULL, 'trace', '{}'::jsonb),
        jsonb_build_object('id', 'resp_' || md5('q' || k), 'object', 'response',
            'status', 'queued', 'background', true, 'output', '[]'::jsonb),
        '[]'::jsonb
    FROM generate_series(0, %(interactive)s - 1) AS k
    RETURNING id, scope
)
INSERT INTO procrastinate_jobs
    (queue_name, task_name, priority, lock, args)
SELECT 'lgos_background', 'lgos.run_background_response', 20, id,
    jsonb_build_object('response_id', id, 'lgos_tenant', scope)
FROM queued
"""
"""A tenant's queued background Responses and their jobs."""

_LINES = """
INSERT INTO procrastinate_jobs
    (queue_name, task_name, priority, lock, queueing_lock, args)
SELECT 'lgos_background', 'lgos.run_batch_step', 0,
    'batch_' || md5('w' || b) || '/' || chunk,
    'chunk:batch_' || md5('w' || b) || '/' || chunk,
    jsonb_build_object('kind', 'chunk', 'batch_id', 'batch_' || md5('w' || b),
        'chunk', chunk, 'lgos_tenant', 'tenant-' || (b %% %(tenants)s))
FROM generate_series(0, %(lines)s - 1) AS k,
    LATERAL (SELECT k / %(lines_per_batch)s AS b,
        k %% %(lines_per_batch)s AS chunk) AS place
"""
"""Batch chunks waiting, ``lines_per_batch`` per batch, the batches over
the tenants."""

_RUNNING = """
WITH worker AS (
    INSERT INTO procrastinate_workers DEFAULT VALUES RETURNING id
)
INSERT INTO procrastinate_jobs
    (queue_name, task_name, priority, lock, args, status, worker_id)
SELECT 'lgos_background', 'lgos.run_batch_step', 0, 'running/' || k,
    jsonb_build_object('kind', 'chunk', 'batch_id', 'running', 'chunk', k,
        'lgos_tenant', 'tenant-' || (k %% %(tenants)s)),
    'doing', worker.id
FROM generate_series(0, %(running)s - 1) AS k, worker
"""

_RECENT = """
INSERT INTO lgos_background_responses (id, scope, snapshot, input_items)
SELECT 'resp_' || md5('n' || id), scope,
    jsonb_set(jsonb_set(snapshot, '{id}', to_jsonb('resp_' || md5('n' || id))),
        '{output,0,id}', to_jsonb('msg_' || md5('n' || id))),
    input_items
FROM lgos_background_responses WHERE job IS NULL LIMIT %(recent)s
"""
"""Responses kept since the last vacuum: copies of generated ones, new ids."""

_TABLES = (
    "lgos_background_responses",
    "lgos_background_events",
    "lgos_conversations",
    "lgos_conversation_items",
    "lgos_batches",
    "procrastinate_jobs",
    "procrastinate_events",
    "procrastinate_workers",
)


def build(url: str, shape: Shape, log: Log) -> dict[str, float]:
    """Write ``shape``'s rows into the (set up, empty) database at ``url``,
    then vacuum and analyse it as autovacuum would have; seconds per part."""
    params: dict[str, Any] = {
        "responses": shape.chains * shape.chain,
        "chains": shape.chains,
        "tenants": shape.tenants,
        "conversations": shape.conversations,
        "items": shape.items,
        "batch_tenants": shape.batch_tenants,
        "batches_per_tenant": shape.batches_per_tenant,
        "interactive": shape.interactive_per_tenant * shape.tenants,
        "lines": shape.lines,
        "lines_per_batch": shape.lines_per_batch,
        "running": RUNNING_JOBS if shape.lines else 0,
    }
    parts = [
        ("responses", _RESPONSES),
        ("events", _EVENTS),
        ("conversations", _CONVERSATIONS),
        ("items", _ITEMS),
        ("batches", _BATCHES),
        ("queued responses", _INTERACTIVE),
        ("batch lines", _LINES),
        ("running jobs", _RUNNING),
    ]
    # bigint, all of them: psycopg would send small numbers as smallint,
    # and their products overflow it.
    params = {name: Int8(value) for name, value in params.items()}
    seconds: dict[str, float] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute("SET maintenance_work_mem = '256MB'")
        for name, statement in parts:
            began = time.monotonic()
            conn.execute(statement, params)
            seconds[name] = time.monotonic() - began
            log(f"  {name}: {seconds[name]:.1f} s")
        began = time.monotonic()
        conn.execute("VACUUM (ANALYZE) " + ", ".join(_TABLES))
        seconds["vacuum analyze"] = time.monotonic() - began
        log(f"  vacuum analyze: {seconds['vacuum analyze']:.1f} s")
        if shape.recent:
            began = time.monotonic()
            conn.execute(_RECENT, {"recent": Int8(shape.recent)})
            seconds["recent"] = time.monotonic() - began
            log(f"  recent Responses, after the vacuum: {seconds['recent']:.1f} s")
    return seconds


def table_sizes(url: str) -> dict[str, dict[str, int]]:
    """Rows and bytes (indexes and TOAST included) of each table."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname, reltuples::bigint, pg_total_relation_size(oid) "
            "FROM pg_class WHERE relname = ANY(%s)",
            (list(_TABLES),),
        ).fetchall()
    return {
        name: {"rows": max(0, tuples), "bytes": size} for name, tuples, size in rows
    }
