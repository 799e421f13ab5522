"""Binding the API: prefix, docs, lifespan and the public surface."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from types import ModuleType

import httpx
import langgraph_openai_serve
import pytest
from fastapi import FastAPI
from langgraph_openai_serve import (
    GraphConfigurationError,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


def _server(**settings) -> LanggraphOpenaiServe:
    registry = GraphRegistry(registry={"m": config(scripted_graph("x"))})
    return LanggraphOpenaiServe(graphs=registry, settings=Settings(**settings))


async def _get(app: FastAPI, path: str) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        return await client.get(path)


async def test_prefix_argument_and_setting_choose_the_mount_point():
    by_argument = _server().bind_openai_api(prefix="openai/v2/")
    by_setting = _server(OPENAI_API_PREFIX="/api/v1").bind_openai_api()

    assert (await _get(by_argument.app, "/openai/v2/models")).status_code == 200
    assert (await _get(by_setting.app, "/api/v1/models")).status_code == 200
    assert (await _get(by_setting.app, "/v1/models")).status_code == 404


async def test_docs_are_off_by_default_and_opt_in():
    hidden = _server().bind_openai_api()
    shown = _server(OPENAI_API_DOCS_ENABLED=True).bind_openai_api()

    assert (await _get(hidden.app, "/v1/openapi.json")).status_code == 404
    assert (await _get(shown.app, "/v1/openapi.json")).status_code == 200
    assert (await _get(shown.app, "/v1/docs")).status_code == 200


@pytest.mark.parametrize("docs", [False, True])
async def test_the_host_lgos_builds_serves_no_docs_of_its_own(docs):
    # Its document listed none of the API, only the library and its version.
    server = _server(OPENAI_API_DOCS_ENABLED=docs).bind_openai_api()

    for path in ("/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"):
        answer = await _get(server.app, path)
        assert answer.status_code == 404, path
        assert "openapi" not in answer.text.lower(), path


async def test_enabled_docs_need_a_key_when_keys_are_configured():
    server = _server(OPENAI_API_DOCS_ENABLED=True, API_KEYS="sk-one").bind_openai_api()

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    ) as client:
        without = [
            await client.get(f"/v1/{p}") for p in ("docs", "redoc", "openapi.json")
        ]
        keyed = await client.get(
            "/v1/openapi.json", headers={"Authorization": "Bearer sk-one"}
        )

    assert [answer.status_code for answer in without] == [401, 401, 401]
    assert keyed.status_code == 200
    assert "/responses" in keyed.json()["paths"]


async def test_docs_describe_the_json_bodies_of_chat_and_responses():
    shown = _server(OPENAI_API_DOCS_ENABLED=True).bind_openai_api()

    document = (await _get(shown.app, "/v1/openapi.json")).json()
    components = document["components"]["schemas"]

    def resolve(schema: dict) -> dict:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        return components[name]

    for path, field in (("/chat/completions", "messages"), ("/responses", "input")):
        body = document["paths"][path]["post"]["requestBody"]
        schema = resolve(body["content"]["application/json"]["schema"])
        assert body["required"] is True
        assert field in schema["properties"], path
        assert "model" in schema["required"], path
    # Every reference in the document resolves (no dangling $defs).
    text = json.dumps(document)
    for ref in set(re.findall(r'"\$ref": "([^"]+)"', text)):
        assert ref.removeprefix("#/components/schemas/") in components, ref


def test_environment_settings_are_read_when_the_server_is_built(monkeypatch):
    monkeypatch.setenv("LGOS_OPENAI_API_PREFIX", "custom/")
    monkeypatch.setenv("LGOS_SSE_PING_INTERVAL", "2.5")

    registry = GraphRegistry(registry={"m": config(scripted_graph("x"))})
    server = LanggraphOpenaiServe(graphs=registry)

    assert server.settings.OPENAI_API_PREFIX == "/custom"
    assert server.settings.SSE_PING_INTERVAL == 2.5


def test_root_prefix_is_refused():
    with pytest.raises(ValueError, match="must not be '/'"):
        _server().bind_openai_api(prefix="/")


def test_host_app_routes_stay_reachable_and_openai_app_is_exposed():
    app = FastAPI()

    @app.get("/ready")
    def ready() -> dict[str, bool]:
        return {"ready": True}

    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry={"m": config(scripted_graph("x"))}), app=app
    )
    with pytest.raises(RuntimeError, match="bind_openai_api"):
        _ = server.openai_app
    server.bind_openai_api()

    assert isinstance(server.openai_app, FastAPI)
    assert server.app is app
    assert app.state.graph_registry is server.graph_registry


async def test_middleware_added_to_the_built_host_sees_openai_requests():
    # The host LGOS builds hands OpenAI requests straight to the mount only
    # while nothing of its own could see them (host.py).
    server = _server().bind_openai_api()

    class Stamp:
        def __init__(self, app) -> None:
            self.app = app

        async def __call__(self, scope, receive, send) -> None:
            async def stamped(message) -> None:
                if message["type"] == "http.response.start":
                    message["headers"] = [*message["headers"], (b"x-host", b"seen")]
                await send(message)

            await self.app(scope, receive, stamped)

    server.app.add_middleware(Stamp)

    # The first request builds the host's middleware; the next ones use it.
    for _ in range(2):
        response = await _get(server.app, "/v1/models")
        assert response.status_code == 200
        assert response.headers["x-host"] == "seen"


async def test_a_host_route_under_the_prefix_ahead_of_the_mount_still_answers():
    server = _server()

    @server.app.get("/v1/custom")
    def custom() -> dict[str, bool]:
        return {"custom": True}

    server.bind_openai_api()

    for _ in range(2):  # before and after the host built its middleware
        assert (await _get(server.app, "/v1/custom")).json() == {"custom": True}
        assert (await _get(server.app, "/v1/models")).status_code == 200


def test_graph_factories_fail_at_startup_not_first_request():
    from starlette.testclient import TestClient

    registry = GraphRegistry(registry={"m": config(lambda: "not a graph")})
    server = LanggraphOpenaiServe(graphs=registry).bind_openai_api()

    with pytest.raises(GraphConfigurationError), TestClient(server.app):
        pass


def test_graphs_must_be_a_registry():
    with pytest.raises(TypeError, match="GraphRegistry"):
        LanggraphOpenaiServe(graphs={"m": None})  # type: ignore[arg-type]


def test_public_names_are_exactly_the_documented_surface():
    public = {
        name
        for name, value in vars(langgraph_openai_serve).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }

    assert set(langgraph_openai_serve.__all__) == public
    assert sorted(langgraph_openai_serve.__all__) == langgraph_openai_serve.__all__


def test_import_reads_no_environment(tmp_path):
    (tmp_path / ".env").write_text("LGOS_OPENAI_API_PREFIX=broken\n")
    code = "import langgraph_openai_serve, sys; sys.exit(0)"

    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"LGOS_OPENAI_API_PREFIX": "/"},
        capture_output=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr.decode()
