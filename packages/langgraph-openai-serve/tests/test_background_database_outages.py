"""A background run never fails because the database blinked.

A server and a worker loop of this process share a real PostgreSQL of this
module's own (``lgos_testkit.postgres``). A run is held in its second node
while the database resets every connection, or refuses connections; the
run's next write meets the fault, the run is handed back once the database
takes it, and the queue runs it again from its last checkpoint: it ends
``completed``, with its answer, never ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import psycopg
import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_testkit import async_wait_until
from lgos_testkit.postgres import FaultyPostgres

pytestmark = pytest.mark.anyio

PROMPT = 60.0


class Held:
    """A second node that waits for ``release``, counting its runs."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.runs = 0

    async def node(self, state: MessagesState) -> dict[str, list[AIMessage]]:
        self.runs += 1
        self.entered.set()
        await self.release.wait()
        return {"messages": [AIMessage(content="released")]}


def _graph(held: Held):
    builder = StateGraph(MessagesState)
    builder.add_node("first", lambda state: {"messages": []})
    builder.add_node("held", held.node)
    builder.add_edge(START, "first")
    builder.add_edge("first", "held")
    builder.add_edge("held", END)
    return builder.compile()


@pytest.fixture
def database(faulty_database: FaultyPostgres) -> FaultyPostgres:
    return faulty_database


@pytest.fixture
def held() -> Held:
    return Held()


@dataclass
class Fleet:
    http: httpx.AsyncClient
    worker: Any
    listener: Any
    """The API's listener of background events (its followers wait there)."""
    app: Any
    running: asyncio.Task[None]
    """The worker's loop (the fixture stops it)."""


def _server(database: FaultyPostgres, held: Held, **settings: Any) -> Any:
    registry = GraphRegistry(
        registry={
            "held": GraphConfig(
                graph=_graph(held),
                description="held in its second node",
                features={GraphFeature.BACKGROUND},
            )
        }
    )
    return LanggraphOpenaiServe(
        graphs=registry,
        settings=Settings(
            **{
                "BACKGROUND_BACKEND": "postgres",
                "RESPONSE_STORE": "postgres",
                "DATABASE_URL": database.url,
                "DATABASE_TIMEOUT": 1.0,
                "QUEUE_DATABASE_WAIT": 2.0,
                **settings,
            }
        ),
    ).bind_openai_api()


def _worker(server: Any, concurrency: int = 2, heartbeat_interval: float = 1.0) -> Any:
    return server.services.backend.jobs.worker(
        concurrency=concurrency,
        shutdown_timeout=5.0,
        heartbeat_interval=heartbeat_interval,
        stalled_check_interval=3600.0,
    )


@pytest.fixture
async def fleet(database: FaultyPostgres, held: Held) -> AsyncIterator[Fleet]:
    async with _fleet(database, held) as running_fleet:
        yield running_fleet


@contextlib.asynccontextmanager
async def _fleet(
    database: FaultyPostgres, held: Held, heartbeat_interval: float = 1.0
) -> AsyncIterator[Fleet]:
    server = _server(database, held)
    await server.services.state.registry.resolve_all()
    services = server.services
    worker = _worker(server, heartbeat_interval=heartbeat_interval)
    running = asyncio.create_task(worker.run())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://lgos.test"
    ) as client:
        yield Fleet(
            client, worker, services.backend.responses.listener, server.app, running
        )
    held.release.set()
    worker.stop()
    await running
    await services.close()
    await services.backend.close()


async def _submit(http: httpx.AsyncClient) -> str:
    queued = await http.post(
        "/v1/responses", json={"model": "held", "input": "Go", "background": True}
    )
    assert queued.status_code == 200, queued.text
    return str(queued.json()["id"])


async def _submit_retried(http: httpx.AsyncClient) -> str:
    """A submission as the SDK makes it: a 503 is retried (one
    Idempotency-Key for all tries)."""
    client = openai.AsyncOpenAI(
        base_url="http://lgos.test/v1", api_key="x", http_client=http
    )
    queued = await client.responses.create(model="held", input="Go", background=True)
    return queued.id


async def _settled(http: httpx.AsyncClient, response_id: str) -> dict:
    found: dict = {}

    async def ended() -> bool:
        answer = await http.get(f"/v1/responses/{response_id}")
        if answer.status_code != 200:
            return False  # the database may still be coming back
        found.update(answer.json())
        return found["status"] in ("completed", "failed", "cancelled", "incomplete")

    await async_wait_until(ended, PROMPT, "the background run to end")
    return found


def _runs_lost(database: FaultyPostgres, response_id: str) -> int:
    """Attempts that ended with neither an end nor a hand-back (what the
    store counts against ``LGOS_BACKGROUND_MAX_ATTEMPTS``)."""
    with psycopg.connect(database.url) as conn:
        row = conn.execute(
            "SELECT attempts_started - attempts_handed_back - 1 "
            "FROM lgos_background_responses WHERE id = %s",
            (response_id,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _faulted(caplog: pytest.LogCaptureFixture):
    async def seen() -> bool:
        return any("background.database_fault" in r.message for r in caplog.records)

    return seen


async def test_a_run_whose_connections_the_database_reset_completes(
    fleet, database, held
):
    http = fleet.http
    response_id = await _submit(http)
    await asyncio.wait_for(held.entered.wait(), PROMPT)

    database.terminate_clients()  # the run's pooled connections die under it
    held.release.set()
    ended = await _settled(http, response_id)

    assert ended["status"] == "completed", ended
    assert ended["output"][-1]["content"][0]["text"] == "released"
    assert _runs_lost(database, response_id) == 0
    assert _runs_lost(database, response_id) == 0


async def test_a_run_that_meets_a_refusing_database_completes_once_it_is_back(
    fleet, database, held, caplog
):
    http = fleet.http
    caplog.set_level(logging.WARNING, logger="langgraph_openai_serve")
    response_id = await _submit(http)
    await asyncio.wait_for(held.entered.wait(), PROMPT)

    with database.refusing():
        held.release.set()
        await async_wait_until(_faulted(caplog), PROMPT, "the run to meet the fault")
    ended = await _settled(http, response_id)

    assert ended["status"] == "completed", ended
    assert ended["output"][-1]["content"][0]["text"] == "released"
    assert _runs_lost(database, response_id) == 0


async def test_after_a_database_restart_the_worker_takes_new_runs(
    fleet, database, held
):
    held.release.set()
    await _settled(fleet.http, await _submit_retried(fleet.http))

    database.restart()  # every connection dies: the pool's, the worker's, its listener
    ended = await _settled(fleet.http, await _submit_retried(fleet.http))

    assert ended["status"] == "completed", ended


async def test_a_worker_the_database_refused_takes_runs_again_once_it_is_back(
    fleet, database, held, caplog
):
    caplog.set_level(logging.ERROR, logger="procrastinate")
    held.release.set()
    await _settled(fleet.http, await _submit_retried(fleet.http))  # it takes jobs

    async def worker_down() -> bool:  # its heartbeat failed: it stopped
        return any(r.name.startswith("procrastinate") for r in caplog.records)

    # Longer than the queue's connections wait (QUEUE_DATABASE_WAIT).
    with database.refusing():
        await async_wait_until(worker_down, PROMPT, "procrastinate to stop its worker")
    ended = await _settled(fleet.http, await _submit_retried(fleet.http))

    assert ended["status"] == "completed", ended
    assert fleet.worker.restarts == 1


def _events(body: str) -> list[dict]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in body.splitlines()
        if line.startswith("data: ")
    ]


async def test_a_follower_of_a_run_sees_it_through_a_refusal(
    fleet, database, held, caplog
):
    http, listener = fleet.http, fleet.listener
    caplog.set_level(logging.WARNING, logger="langgraph_openai_serve")
    response_id = await _submit(http)
    await asyncio.wait_for(held.entered.wait(), PROMPT)
    following = asyncio.create_task(
        http.get(f"/v1/responses/{response_id}?stream=true")
    )

    async def waits() -> bool:
        return listener.followers(response_id) == 1

    await async_wait_until(waits, PROMPT, "the follower to wait for news")
    with database.refusing():
        held.release.set()

        async def follower_waits() -> bool:
            return any(
                "background.follower_waits_for_database" in r.message
                for r in caplog.records
            )

        await async_wait_until(follower_waits, PROMPT, "the follower to meet it")
    followed = await asyncio.wait_for(following, PROMPT)

    assert followed.status_code == 200
    types = [event["type"] for event in _events(followed.text)]
    assert types[-1] == "response.completed", types
    assert "error" not in types
    assert "response.failed" not in types


async def test_a_worker_started_while_the_database_refuses_takes_runs_once_it_is_back(
    fleet, database, held, caplog
):
    caplog.set_level(logging.WARNING, logger="langgraph_openai_serve")
    held.release.set()
    fleet.worker.stop()  # the fleet's own worker takes nothing from here on
    server = _server(database, held, QUEUE_DATABASE_WAIT=1.0)
    await server.services.state.registry.resolve_all()
    late = _worker(server, concurrency=1)
    starting: asyncio.Task[None] | None = None
    try:
        with database.refusing():
            starting = asyncio.create_task(late.run())

            async def waits() -> bool:
                return any(
                    "background.worker_waits_for_database" in r.message
                    for r in caplog.records
                )

            await async_wait_until(waits, PROMPT, "the worker to wait for it")
            assert not starting.done()
        ended = await _settled(fleet.http, await _submit_retried(fleet.http))
        assert ended["status"] == "completed", ended
    finally:
        late.stop()
        if starting is not None:
            await starting
        await server.services.close()
        await server.services.backend.close()


def _queue_listeners(database: FaultyPostgres) -> int:
    """procrastinate's LISTEN sessions (the workers' wake-up on new jobs)."""
    with psycopg.connect(database.admin_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'lgos' "
            "AND query ILIKE 'LISTEN %procrastinate%'"
        ).fetchone()
    return int(row[0]) if row else 0


async def test_a_worker_listens_for_new_jobs_again_after_a_refusal(
    fleet, database, held, caplog
):
    caplog.set_level(logging.WARNING, logger="langgraph_openai_serve")
    held.release.set()
    await _settled(fleet.http, await _submit_retried(fleet.http))

    async def listening() -> bool:
        return _queue_listeners(database) == 1

    await async_wait_until(listening, PROMPT, "the worker to listen")

    async def lost() -> bool:
        return any(
            "background.queue_listener_lost" in r.message for r in caplog.records
        )

    with database.refusing():  # its LISTEN connection is terminated, then refused
        await async_wait_until(lost, PROMPT, "the worker to lose its listener")
    await async_wait_until(listening, PROMPT, "the worker to listen again")
    ended = await _settled(fleet.http, await _submit_retried(fleet.http))

    assert ended["status"] == "completed", ended
    assert fleet.worker.restarts == 0  # the listener came back, not a new worker


async def test_a_look_for_jobs_the_database_refuses_does_not_restart_the_worker(
    database, held, caplog
):
    caplog.set_level(logging.WARNING, logger="langgraph_openai_serve")
    # No heartbeat during the test: only the look for jobs meets the refusal.
    async with _fleet(database, held, heartbeat_interval=3600.0) as fleet:
        held.release.set()
        await _settled(fleet.http, await _submit_retried(fleet.http))

        async def looked() -> bool:
            return any("background.fetch_failed" in r.message for r in caplog.records)

        with database.refusing():
            fleet.worker._worker._new_job_event.set()  # what a job's end does
            await async_wait_until(looked, PROMPT, "the worker to look for jobs")
        ended = await _settled(fleet.http, await _submit_retried(fleet.http))

        assert ended["status"] == "completed", ended
        assert fleet.worker.restarts == 0


async def test_readiness_is_back_at_once_after_a_reset(fleet, database, held):
    held.release.set()
    async with fleet.app.router.lifespan_context(fleet.app):
        before = await fleet.http.get("/health/ready")
        database.terminate_clients()  # the pool's connections and the queue's die
        after = await fleet.http.get("/health/ready")
        # The lifespan's end closes the queue: its worker stops first (it may
        # be starting over after the reset, on the app about to close).
        fleet.worker.stop()
        await fleet.running

    assert before.status_code == 200, before.text
    assert after.status_code == 200, after.text
    assert after.json()["checks"] == {"postgres": "ok", "queue": "ok"}
