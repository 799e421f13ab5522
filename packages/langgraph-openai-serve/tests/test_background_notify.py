"""Followers of background Responses on PostgreSQL wake on LISTEN/NOTIFY.

The follower runs in this test process with its safety-net poll set to an
hour, so within a test only a notification (or the listener's wake-up after
it reconnects) can bring it news; the events come from a real ``lgos worker``
running the ``hold`` graph, which stores nothing more until the test releases
it. A follower that is not woken hangs, and the test fails at its guard.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import psycopg
import pytest
from anyio import to_thread
from backend_fixtures import set_up_once
from background_stack import Stack
from langgraph_openai_serve.backends.postgres.database import Database
from langgraph_openai_serve.backends.postgres.notify import ResponseListener
from langgraph_openai_serve.backends.postgres.responses import PostgresResponseStore
from langgraph_openai_serve.responses.protocol import BackgroundJob, StoredEvent
from lgos_testkit import async_wait_until
from postgres_fixtures import Pool
from psycopg.conninfo import make_conninfo

pytestmark = pytest.mark.anyio

NEVER = 3600.0
"""The follower's safety-net poll: it does not fire during a test."""
GUARD = 120.0
"""How long a test waits for an event before it counts as never coming."""


@pytest.fixture
def stack(tmp_path, postgres_uri, bytecode_cache) -> Iterator[Stack]:
    started = Stack(tmp_path, postgres_uri, bytecode_cache)
    started.start_api()
    started.start_worker()
    yield started
    started.stop()


@pytest.fixture
def listener_role(postgres_uri) -> Iterator[str]:
    """A role of its own for the listener, so a test can refuse its logins."""
    role = f"lgos_listener_{uuid.uuid4().hex[:8]}"
    _sql(postgres_uri, f"CREATE ROLE {role} LOGIN")
    yield role
    _sql(postgres_uri, f"DROP ROLE IF EXISTS {role}")


def _sql(postgres_uri: str, query: str) -> None:
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute(query)


@pytest.fixture
async def listener(postgres_uri) -> AsyncIterator[ResponseListener]:
    started = ResponseListener(postgres_uri)
    await _listening(started)
    yield started
    await started.close()


async def _listening(listener: ResponseListener) -> None:
    """Start ``listener`` and wait for its LISTEN: a follower that subscribes
    later is then woken by notifications only, not by the first connection."""

    async def listening() -> bool:
        return listener.backend_pid is not None

    listener.start()
    await async_wait_until(listening, GUARD, "the listener's LISTEN")


class Follower:
    """``store.events(response_id)`` in a task; events are taken one by one."""

    def __init__(self, store: PostgresResponseStore, response_id: str) -> None:
        self._queue: asyncio.Queue[StoredEvent | None] = asyncio.Queue()
        self._task = asyncio.create_task(self._follow(store, response_id))

    async def _follow(self, store: PostgresResponseStore, response_id: str) -> None:
        async for event in store.events(response_id, -1):
            await self._queue.put(event)
        await self._queue.put(None)

    async def next(self) -> StoredEvent | None:
        with anyio.fail_after(GUARD):
            return await self._queue.get()

    async def rest(self) -> list[StoredEvent]:
        events = []
        while (event := await self.next()) is not None:
            events.append(event)
        return events

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def _name(event: StoredEvent) -> str:
    return str(event.event["type"])


async def _submit_hold(stack: Stack, tag: str) -> Any:
    client = stack.client()
    return await to_thread.run_sync(
        lambda: client.responses.create(model="hold", input=tag, background=True)
    )


def _assert_whole_stream(events: list[StoredEvent], tag: str) -> None:
    assert [event.sequence for event in events] == list(range(len(events)))
    assert _name(events[0]) == "response.created"
    assert _name(events[-1]) == "response.completed"
    assert f"Held {tag}." in json.dumps(events[-1].event)


async def test_a_follower_wakes_when_a_worker_process_stores_an_event(
    stack: Stack, postgres_pool: Pool, listener: ResponseListener
) -> None:
    store = PostgresResponseStore(
        Database(postgres_pool), poll_interval=NEVER, listener=listener
    )
    tag = uuid.uuid4().hex[:8]
    submitted = await _submit_hold(stack, tag)
    follower = Follower(store, submitted.id)
    try:
        first = await follower.next()
        stack.release(tag)  # the rest of the run is stored only now
        rest = await follower.rest()
    finally:
        await follower.close()

    assert first is not None
    _assert_whole_stream([first, *rest], tag)


async def test_a_dropped_listener_reconnects_and_its_follower_misses_no_event(
    stack: Stack, postgres_pool: Pool, postgres_uri: str, listener_role: str
) -> None:
    listener = ResponseListener(
        make_conninfo(postgres_uri, user=listener_role),
        reconnect_delay=0.05,
        max_reconnect_delay=0.2,
    )
    await _listening(listener)
    store = PostgresResponseStore(
        Database(postgres_pool), poll_interval=NEVER, listener=listener
    )
    tag = uuid.uuid4().hex[:8]
    submitted = await _submit_hold(stack, tag)
    follower = Follower(store, submitted.id)
    try:
        first = await follower.next()
        dropped = listener.backend_pid
        assert dropped is not None
        stack.sql(f"ALTER ROLE {listener_role} NOLOGIN")
        stack.sql("SELECT pg_terminate_backend(%s)", (dropped,))

        async def disconnected() -> bool:
            return listener.backend_pid is None

        await async_wait_until(disconnected, GUARD, "the listener to see the drop")
        # The whole rest of the run is stored while nobody listens.
        stack.release(tag)
        await to_thread.run_sync(
            lambda: stack.wait_status(submitted.id, {"completed"}, GUARD)
        )
        stack.sql(f"ALTER ROLE {listener_role} LOGIN")
        rest = await follower.rest()
    finally:
        await follower.close()
        await listener.close()

    assert first is not None
    _assert_whole_stream([first, *rest], tag)


async def test_a_follower_whose_listener_never_connects_still_gets_every_event(
    postgres_pool: Pool, postgres_uri: str, listener_role: str
) -> None:
    _sql(postgres_uri, f"ALTER ROLE {listener_role} NOLOGIN")
    listener = ResponseListener(make_conninfo(postgres_uri, user=listener_role))
    store = PostgresResponseStore(
        Database(postgres_pool), poll_interval=0.05, listener=listener
    )
    await set_up_once(postgres_uri)
    response_id = f"resp_{uuid.uuid4().hex}"
    job = BackgroundJob(response_id=response_id, scope="notify-test", body={})
    await store.create(job, {"id": response_id, "status": "in_progress"})
    follower = Follower(store, response_id)
    events = [{"type": "response.created"}, {"type": "one"}]
    try:
        await store.append_events(response_id, events[:1])
        first = await follower.next()
        await store.append_events(response_id, events[1:])
        await store.set_snapshot(response_id, {"id": response_id, "status": "failed"})
        rest = await follower.rest()
    finally:
        await follower.close()
        await listener.close()

    assert listener.backend_pid is None  # no notification could have woken it
    assert [first, *rest] == [StoredEvent(0, events[0]), StoredEvent(1, events[1])]
