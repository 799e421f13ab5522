"""The database goes away and comes back: a real PostgreSQL of this module's
own (``lgos_testkit.postgres``) has its connections terminated, refuses
connections, stalls (SIGSTOP) and restarts, under a server that keeps
Responses there (``LGOS_RESPONSE_STORE=postgres``).

What a client sees: no answer is a 500; a read on a connection the database
broke is answered all the same; what cannot be answered now is a 503 naming
the cause, with ``Retry-After``, given while the database is still away
(never held for the outage's length); ``/health/ready`` answers within its
own bound, and the server serves again once the database is back, without a
restart.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import psycopg
import pytest
from langgraph_openai_serve import GraphRegistry, LanggraphOpenaiServe, Settings
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.operations.outages import DatabaseTimeout
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import async_wait_until
from lgos_testkit.postgres import FaultyPostgres
from metrics_support import Scrape
from support import config, single_model_graph

pytestmark = pytest.mark.anyio

DEADLINE = 1.0
"""``LGOS_DATABASE_TIMEOUT`` here: short, so an outage answers quickly."""
BACK_WITHIN = 30.0
"""How long the server may take to serve again once the database is back."""


@pytest.fixture
def database(faulty_database: FaultyPostgres) -> FaultyPostgres:
    return faulty_database


@pytest.fixture
async def http(database: FaultyPostgres) -> AsyncIterator[httpx.AsyncClient]:
    model = ScriptedChatModel(responder=lambda messages: "kept")
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry={"echo": config(single_model_graph(model))}),
        settings=Settings(
            RESPONSE_STORE="postgres",
            DATABASE_URL=database.url,
            DATABASE_TIMEOUT=DEADLINE,
        ),
    ).bind_openai_api()
    app = server.app
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://lgos.test"
        ) as client,
    ):
        yield client
    await server.services.backend.close()


async def _kept(http: httpx.AsyncClient) -> str:
    created = await http.post(
        "/v1/responses", json={"model": "echo", "input": "Hi", "store": True}
    )
    assert created.status_code == 200, created.text
    return str(created.json()["id"])


def _unavailable(answer: httpx.Response) -> None:
    """A 503 that names the database and says when to come back."""
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "database_unavailable"
    assert answer.headers["retry-after"] == "1"


async def _serving_again(http: httpx.AsyncClient, response_id: str) -> None:
    async def answered() -> bool:
        retrieved = await http.get(f"/v1/responses/{response_id}")
        assert retrieved.status_code in (200, 503), retrieved.text
        return retrieved.status_code == 200

    await async_wait_until(answered, BACK_WITHIN, "the server to serve again")


async def test_reads_on_connections_the_database_reset_are_answered(http, database):
    kept = [await _kept(http) for _ in range(3)]

    database.terminate_clients()  # every pooled connection is dead now
    answers = [await http.get(f"/v1/responses/{response_id}") for response_id in kept]

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert [answer.json()["id"] for answer in answers] == kept


async def test_an_answered_response_is_kept_though_the_database_reset_its_connection(
    http, database
):
    await _kept(http)  # the pool holds a connection now

    database.terminate_clients()
    created = await http.post(
        "/v1/responses", json={"model": "echo", "input": "Again", "store": True}
    )

    assert created.status_code == 200, created.text
    retrieved = await http.get(f"/v1/responses/{created.json()['id']}")
    assert retrieved.json()["output"] == created.json()["output"]


async def test_a_refusing_database_gets_503s_while_it_refuses_then_service(
    http, database
):
    response_id = await _kept(http)

    with database.refusing():
        # Each answered while the database still refuses: none waits for it.
        read = await http.get(f"/v1/responses/{response_id}")
        write = await http.post(
            "/v1/responses", json={"model": "echo", "input": "x", "store": True}
        )
        ready = await http.get("/health/ready")
        live = await http.get("/health/live")
    await _serving_again(http, response_id)

    _unavailable(read)
    _unavailable(write)
    assert ready.status_code == 503
    # A code, never the driver's text (which names the database's address).
    assert ready.json()["reason"] in {"postgres_timeout", "postgres_unavailable"}
    assert live.status_code == 200


async def test_a_stalled_database_gets_503s_within_the_deadline_then_service(
    http, database
):
    response_id = await _kept(http)

    with database.stalled():
        read = await http.get(f"/v1/responses/{response_id}")
        ready = await http.get("/health/ready")
        again = await http.get("/health/ready")
        live = await http.get("/health/live")
    await _serving_again(http, response_id)

    _unavailable(read)
    assert (ready.status_code, again.status_code, live.status_code) == (503, 503, 200)
    # The probe was answered at its own bound, not the database's.
    assert ready.json()["checks"]["postgres"] == "timeout"


async def test_after_a_restart_of_the_database_the_server_serves_at_once(
    http, database
):
    response_id = await _kept(http)

    database.restart()
    retrieved = await http.get(f"/v1/responses/{response_id}")
    ready = await http.get("/health/ready")

    assert retrieved.status_code == 200, retrieved.text
    assert ready.status_code == 200, ready.text


async def _scraped(http: httpx.AsyncClient) -> Scrape:
    answer = await http.get("/metrics")
    assert answer.status_code == 200, answer.text
    return Scrape.of(answer.text)


async def test_metrics_count_the_faults_requests_met_and_the_connections_replaced(
    http, database
):
    response_id = await _kept(http)
    before = await _scraped(http)

    database.terminate_clients()
    assert (await http.get(f"/v1/responses/{response_id}")).status_code == 200
    with database.refusing():
        _unavailable(await http.get(f"/v1/responses/{response_id}"))
    await _serving_again(http, response_id)
    after = await _scraped(http)

    def grew(sample: str, **labels: str) -> float:
        return after.value(sample, **labels) - before.value(sample, **labels)

    # The reset broke the read's connection; the refusal left it waiting.
    assert grew("lgos_database_faults_total", cause="unavailable") >= 1
    assert grew("lgos_database_faults_total", cause="timeout") >= 1
    assert grew("lgos_database_reconnects_total", connection="pool") >= 1


async def test_every_connection_has_libpq_bounds_and_an_operators_own_win(database):
    own = psycopg.conninfo.make_conninfo(database.url, keepalives_idle=42)
    backend = PostgresBackend(own, connect_timeout=4)
    try:
        async with await backend.database.connection() as conn:
            pooled = conn.info.get_parameters()
        with psycopg.connect(backend.conninfo) as direct:  # the listener's, the queue's
            listener = direct.info.get_parameters()
    finally:
        await backend.close()

    for parameters in (pooled, listener):
        assert parameters["connect_timeout"] == "4"
        assert parameters["tcp_user_timeout"] == "30000"
        assert parameters["keepalives_count"] == "3"
        assert parameters["keepalives_idle"] == "42"


async def test_a_checkpoint_read_on_a_stalled_database_ends_within_its_deadline(
    database,
):
    backend = PostgresBackend(database.url, checkpoint_timeout=1.0)
    saver = backend.checkpointer()
    assert saver is not None
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    try:
        await backend.database.open()  # the stores open it on first use
        assert await saver.aget_tuple(config) is None  # the pool holds one now
        # Raised while the database is still stalled: never held for it.
        with database.stalled(), pytest.raises(DatabaseTimeout):
            await asyncio.wait_for(saver.aget_tuple(config), BACK_WITHIN)
    finally:
        await backend.close()
