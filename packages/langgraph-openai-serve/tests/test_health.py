"""``/health/live`` and ``/health/ready`` on the host app of ``lgos serve``:
outside the OpenAI prefix, without API keys; readiness follows the process's
lifecycle and the PostgreSQL store and queue it uses."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
import psycopg
import pytest
from langgraph_openai_serve import (
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.operations.readiness import Readiness
from langgraph_openai_serve.operations.routes import operations_app
from lgos_testkit import free_port
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


def _server(**settings: object) -> LanggraphOpenaiServe:
    graphs = {
        "m": config(scripted_graph("ok"), features={GraphFeature.BACKGROUND}),
    }
    return LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=graphs), settings=Settings(**settings)
    ).bind_openai_api()


@contextlib.asynccontextmanager
async def _http(
    server: LanggraphOpenaiServe, *, started: bool = True
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the server's host app, after its startup when ``started``."""
    app = server.app
    try:
        async with contextlib.AsyncExitStack() as stack:
            if started:
                await stack.enter_async_context(app.router.lifespan_context(app))
            yield await stack.enter_async_context(
                httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=app), base_url="http://t"
                )
            )
    finally:
        await server.services.backend.close()


async def test_live_and_ready_answer_outside_the_prefix_without_an_api_key():
    server = _server(API_KEYS="sk-one", OPENAI_API_PREFIX="/api")

    async with _http(server) as http:
        live = await http.get("/health/live")
        ready = await http.get("/health/ready")
        old_health = await http.get("/api/health")
        guarded = await http.get("/api/models")

    assert (live.status_code, live.json()) == (200, {"status": "alive"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    assert ready.headers["cache-control"] == "no-store"
    assert (old_health.status_code, old_health.json()) == (200, {"status": "ok"})
    assert guarded.status_code == 401


async def test_ready_is_503_until_the_graphs_are_resolved():
    async with _http(_server(), started=False) as http:
        ready = await http.get("/health/ready")
        live = await http.get("/health/live")

    assert (ready.status_code, ready.json()) == (
        503,
        {"status": "not_ready", "reason": "starting"},
    )
    assert live.status_code == 200


async def test_a_draining_process_is_not_ready_but_still_serves():
    server = _server()

    async with _http(server) as http:
        server.lifecycle.drain()
        ready = await http.get("/health/ready")
        live = await http.get("/health/live")
        models = await http.get("/v1/models")

    assert ready.status_code == 503
    assert ready.json() == {"status": "not_ready", "reason": "draining"}
    assert live.status_code == 200
    assert models.status_code == 200


async def test_ready_checks_postgres_and_the_queue_and_logs_lgos_db_setup(
    empty_database, caplog
):
    server = _server(BACKGROUND_BACKEND="postgres", DATABASE_URL=empty_database)
    async with _http(server) as http:
        before = await http.get("/health/ready")
        await server.services.backend.setup()
        after = await http.get("/health/ready")

    assert (before.status_code, before.json()) == (
        503,
        {
            "status": "not_ready",
            "reason": "postgres_schema_missing",
            "checks": {"postgres": "schema_missing", "queue": "schema_missing"},
        },
    )
    assert (after.status_code, after.json()) == (
        200,
        {"status": "ready", "checks": {"postgres": "ok", "queue": "ok"}},
    )
    assert "the response tables are missing: run lgos db-setup" in caplog.text


async def test_ready_is_503_when_postgres_does_not_answer():
    unreachable = f"postgresql://lgos@127.0.0.1:{free_port()}/lgos?connect_timeout=1"
    server = _server(RESPONSE_STORE="postgres", DATABASE_URL=unreachable)

    async with _http(server) as http:
        ready = await http.get("/health/ready")
        live = await http.get("/health/live")

    assert ready.status_code == 503
    assert ready.json()["reason"] == "postgres_timeout"
    assert live.status_code == 200


async def test_ready_shows_a_failed_checks_code_and_logs_its_text(caplog):
    # The probe answers anyone; the error's text (host, user) goes to the log.
    async def postgres() -> None:
        raise psycopg.OperationalError(
            'connection to server at "db.internal" (10.1.2.3), port 5432 '
            'failed: FATAL:  password authentication failed for user "lgos"'
        )

    lifecycle = Lifecycle()
    lifecycle.start()
    app = operations_app(Readiness(lifecycle, {"postgres": postgres}))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as http:
        first = await http.get("/health/ready")
        second = await http.get("/health/ready")

    assert (first.status_code, first.json()) == (
        503,
        {
            "status": "not_ready",
            "reason": "postgres_unavailable",
            "checks": {"postgres": "unavailable"},
        },
    )
    assert second.json() == first.json()
    logged = [r.getMessage() for r in caplog.records if "health." in r.getMessage()]
    assert logged == [  # once, not once per probe
        "health.check_failed check=postgres code=unavailable: connection to "
        'server at "db.internal" (10.1.2.3), port 5432 failed: FATAL:  '
        'password authentication failed for user "lgos"'
    ]
