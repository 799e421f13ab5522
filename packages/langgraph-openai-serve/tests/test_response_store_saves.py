"""PostgreSQL's response store writes the saves made at once together
(``backends/postgres/saves.py``): fewer statements, the same rows, and a
failing or abandoned save changes nothing for the others."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from test_response_store import _items, _response

pytestmark = pytest.mark.anyio


@pytest.fixture
async def backend(postgres_backend_factory):
    return await postgres_backend_factory(queue=False)


@pytest.fixture
def store(backend):
    return backend.responses


async def _transactions(pool) -> int:
    # Every statement of an autocommit connection is its own transaction, and
    # the rows one transaction inserted share its id (xmin).
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(DISTINCT xmin::text) AS n FROM lgos_background_responses"
        )
        row = await cursor.fetchone()
    return int(row["n"])


async def test_saves_made_at_once_are_all_kept_in_two_statements(store, backend):
    saves = [(_response(text=f"answer {n}"), _items(f"q{n}")) for n in range(12)]

    await asyncio.gather(*(store.save("alice", r, items) for r, items in saves))

    for response, items in saves:
        assert await store.get(response["id"], "alice") == response
        assert await store.input_items(response["id"], "alice") == items
    # The first save is written at once; the eleven made while it was being
    # written wait for it and go together in the next statement.
    assert await _transactions(backend.pool) == 2


async def test_a_failing_save_made_beside_others_fails_alone(store):
    existing, items = _response(), _items("first")
    await store.save("alice", existing, items)
    others = [_response() for _ in range(5)]

    results = await asyncio.gather(
        store.save("alice", others[0], _items("q")),
        store.save("alice", existing, _items("again")),  # its id is taken
        *(store.save("alice", r, _items("q")) for r in others[1:]),
        return_exceptions=True,
    )

    assert isinstance(results[1], psycopg.errors.UniqueViolation)
    assert [r for n, r in enumerate(results) if n != 1] == [None] * 5
    for response in others:
        assert await store.get(response["id"], "alice") == response
    assert await store.input_items(existing["id"], "alice") == items


async def test_a_save_whose_caller_left_while_it_waited_is_still_kept(
    store, postgres_backend_factory
):
    first, second = _response(), _response()
    writing = asyncio.create_task(store.save("alice", first, _items("q")))
    waiting = asyncio.create_task(store.save("alice", second, _items("q")))
    await asyncio.sleep(0)  # both started: the second waits behind the first

    waiting.cancel()
    await writing
    await store.close()  # waits for the saves still queued

    reader = (await postgres_backend_factory(queue=False)).responses
    assert await reader.get(second["id"], "alice") == second
