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


async def test_saves_made_at_once_are_all_kept_in_one_statement(store, backend):
    saves = [(_response(text=f"answer {n}"), _items(f"q{n}")) for n in range(12)]

    await asyncio.gather(*(store.save("alice", r, items) for r, items in saves))

    for response, items in saves:
        assert await store.get(response["id"], "alice") == response
        assert await store.input_items(response["id"], "alice") == items
    # All twelve were made in one turn of the event loop: the writer the
    # first one started takes them all.
    assert await _transactions(backend.pool) == 1


async def test_saves_made_while_a_statement_is_written_share_the_next(
    store, backend, postgres_uri
):
    first = (_response(text="first"), _items("q0"))
    later = [(_response(text=f"later {n}"), _items(f"q{n}")) for n in range(5)]
    async with await psycopg.AsyncConnection.connect(postgres_uri) as holder:
        # The table locked, the first statement waits in the database.
        await holder.execute("LOCK TABLE lgos_background_responses IN EXCLUSIVE MODE")
        writing = asyncio.create_task(store.save("alice", *first))
        await _until_an_insert_waits(postgres_uri)
        saving = [asyncio.create_task(store.save("alice", *save)) for save in later]
        await asyncio.sleep(0)  # the later saves queued behind the first
        await holder.commit()

        await asyncio.gather(writing, *saving)

    for response, _ in [first, *later]:
        assert await store.get(response["id"], "alice") == response
    assert await _transactions(backend.pool) == 2


async def _until_an_insert_waits(uri: str) -> None:
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        while True:
            cursor = await conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE 'INSERT INTO lgos_background_responses%'"
            )
            if (await cursor.fetchone())[0]:
                return


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


@pytest.mark.parametrize("leaving", [0, 1], ids=["first", "second"])
async def test_a_save_whose_caller_left_while_it_waited_is_still_kept(
    store, postgres_backend_factory, leaving
):
    responses = [_response(), _response()]
    saving = [
        asyncio.create_task(store.save("alice", r, _items("q"))) for r in responses
    ]
    await asyncio.sleep(0)  # both started: both wait for the writer

    saving[leaving].cancel()
    await saving[1 - leaving]
    await store.close()  # waits for the saves still queued

    reader = (await postgres_backend_factory(queue=False)).responses
    for response in responses:
        assert await reader.get(response["id"], "alice") == response


async def test_a_save_queued_behind_a_slow_statement_gets_the_whole_deadline(
    postgres_backend_factory, postgres_uri, loop_clock
):
    # The database's deadline is 2 s. The first save's statement waits 1.5 s
    # for another transaction inserting its id; the second save, queued
    # meanwhile, then waits 0.8 s the same way: within its own 2 s, though
    # the first caller's would have ended 0.5 s into it. The loop's clock is
    # moved on, not waited for.
    store = (await postgres_backend_factory(queue=False, timeout=2.0)).responses
    first, second = _response(), _response()
    async with (
        await psycopg.AsyncConnection.connect(postgres_uri) as one,
        await psycopg.AsyncConnection.connect(postgres_uri) as other,
    ):
        for holder, response in ((one, first), (other, second)):
            await holder.execute(
                "INSERT INTO lgos_background_responses"
                " (id, scope, snapshot, input_items) VALUES (%s, 'bob', '{}', '[]')",
                [response["id"]],
            )
        saving_first = asyncio.create_task(store.save("alice", first, _items("q")))
        await _until_an_insert_waits(postgres_uri)
        saving_second = asyncio.create_task(store.save("alice", second, _items("q")))
        await loop_clock.move_on(1.5)  # the database is slow: the first waits
        await one.rollback()
        await saving_first
        await _until_an_insert_waits(postgres_uri)
        await loop_clock.move_on(0.8)  # and the second
        await other.rollback()

        await saving_second

    assert await store.get(second["id"], "alice") == second


class _LoopClock:
    """The running loop's clock, moved on by the test: the timers it passes
    (a deadline's) run as if that time had gone by."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._real = loop.time
        self._ahead = 0.0

    def time(self) -> float:
        return self._real() + self._ahead

    async def move_on(self, seconds: float) -> None:
        self._ahead += seconds
        # A timer of its own, due now: the loop runs the ones already past
        # (earlier in its heap) before it.
        passed = self._loop.create_future()
        self._loop.call_at(self.time(), passed.set_result, None)
        await passed


@pytest.fixture
async def loop_clock():
    loop = asyncio.get_running_loop()
    clock = _LoopClock(loop)
    loop.time = clock.time  # type: ignore[method-assign]
    try:
        yield clock
    finally:
        del loop.time
