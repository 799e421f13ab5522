"""An ``item_reference`` lookup is planned once per connection, not once per
call, however many Responses the store keeps (issue 48: its cost stays
flat as the store grows).

The connections prepare every statement. PostgreSQL plans the first five
calls of a prepared statement with their values, then keeps a plan of its
own for the connection if it costs no more than those did. Given the ids,
the planner's statistics of the outputs' ids promise a cheaper plan than
the generic one's guess, so it planned every lookup again: on a million
Responses that planning was 0.09 ms of a 0.12 ms lookup. Here a store of a
couple of thousand Responses, analysed as autovacuum would, is enough for
those statistics to exist.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres.database import POOL_KWARGS, Database
from langgraph_openai_serve.backends.postgres.responses import PostgresResponseStore
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

pytestmark = pytest.mark.anyio

KEPT = 2000
"""Kept Responses, over two tenants."""
LOOKUPS = 12
PLANNED_WITH_VALUES = 5
"""Calls PostgreSQL plans with their values before it weighs its own plan."""


def _response(text: str) -> dict[str, Any]:
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "status": "completed",
        "output": [
            {
                "id": f"msg_{uuid.uuid4().hex}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text}],
            }
        ],
    }


@pytest.fixture
async def one_connection(postgres_backend_factory) -> Any:
    """A store on a pool of one connection (so every lookup meets the same
    prepared statement), on a set-up, emptied database."""
    backend = await postgres_backend_factory(queue=False)
    pool: AsyncConnectionPool[psycopg.AsyncConnection[DictRow]] = AsyncConnectionPool(
        backend.conninfo,
        connection_class=psycopg.AsyncConnection[DictRow],
        min_size=1,
        max_size=1,
        open=False,
        kwargs={**POOL_KWARGS, "row_factory": dict_row},
    )
    database = Database(pool)
    store = PostgresResponseStore(database)
    try:
        yield backend, store, database
    finally:
        await store.close()
        await pool.close()


async def test_item_reference_lookups_reuse_one_plan_on_a_large_store(one_connection):
    backend, store, database = one_connection
    kept = [_response(f"answer {n}") for n in range(KEPT)]
    await asyncio.gather(
        *(
            backend.responses.save(("alice", "bob")[n % 2], response, [])
            for n, response in enumerate(kept)
        )
    )
    async with await backend.database.connection() as conn:
        await conn.execute("ANALYZE lgos_background_responses")
    alices = [response["output"][0] for response in kept[0::2]]

    found = [
        await store.output_items([item["id"]], "alice") for item in alices[:LOOKUPS]
    ]
    elsewhere = await store.output_items([alices[0]["id"]], "bob")

    assert found == [{item["id"]: item} for item in alices[:LOOKUPS]]
    assert elsewhere == {}
    async with await database.connection() as conn:
        cursor = await conn.execute(
            "SELECT custom_plans, generic_plans FROM pg_prepared_statements "
            "WHERE statement LIKE '%%jsonb_array_elements(snapshot->''output'')%%'"
        )
        plans = await cursor.fetchall()
    assert plans == [
        {
            "custom_plans": PLANNED_WITH_VALUES,
            "generic_plans": LOOKUPS + 1 - PLANNED_WITH_VALUES,
        }
    ]
