"""Hostile or malformed requests at the edge: every answer is the OpenAI
envelope with the status and ``param`` that name the cause."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator

import httpx
import pytest
from interrupt_graphs import refund_graph
from langgraph_openai_serve import (
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


def _app(graphs=None, **settings):
    graphs = graphs or {
        "m": config(scripted_graph(responder=lambda _: "ok")),
        "bg": config(scripted_graph("ok"), features={GraphFeature.BACKGROUND}),
    }
    return (
        LanggraphOpenaiServe(
            graphs=GraphRegistry(registry=graphs), settings=Settings(**settings)
        )
        .bind_openai_api()
        .app
    )


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app()), base_url="http://t"
    ) as client:
        yield client


def _error(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, object] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def _nested(depth: int) -> bytes:
    """A Responses body whose ``input`` nests arrays ``depth`` levels deep
    (the body object itself is one more level)."""
    return b'{"model":"m","input":' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize("depth", [250, 950, 20_000])
async def test_a_body_nested_past_the_parser_limit_is_400_naming_the_depth(http, depth):
    response = await http.post(
        "/v1/responses", content=_nested(depth), headers={"content-type": "x"}
    )

    error = _error(response, 400)
    assert error["code"] == "json_too_deep"
    assert "deeper than 200 levels" in str(error["message"])


async def test_a_lower_depth_limit_is_enforced_on_valid_bodies():
    tools = [{"type": "function", "name": "f", "parameters": {"a": {"b": {}}}}]
    body = {"model": "m", "input": "Hi", "tools": tools}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app(MAX_JSON_DEPTH=5)), base_url="http://t"
    ) as client:
        deep = await client.post("/v1/responses", json=body)
        tools[0]["parameters"] = {"a": {}}
        shallow = await client.post("/v1/responses", json=body)

    assert _error(deep, 400)["code"] == "json_too_deep"
    assert "deeper than 5 levels" in str(_error(deep, 400)["message"])
    assert shallow.status_code == 200


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_body_over_the_size_limit_is_413(chunked):
    body = json.dumps({"model": "m", "input": "x" * 2000}).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 100):
            yield body[start : start + 100]

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app(MAX_REQUEST_BYTES=1000)),
        base_url="http://t",
    ) as client:
        response = await client.post(
            "/v1/chat/completions", content=chunks() if chunked else body
        )

    error = _error(response, 413)
    assert error["code"] == "request_too_large"
    assert "1000 bytes" in str(error["message"])


@pytest.mark.parametrize(
    ("query", "param", "fragment"),
    [
        ("stream=maybe", "stream", "valid boolean"),
        ("starting_after=-5", "starting_after", "greater than or equal to -1"),
        ("starting_after=x", "starting_after", "valid integer"),
    ],
)
async def test_bad_query_parameters_are_named_in_param(http, query, param, fragment):
    response = await http.get(f"/v1/responses/resp_1?{query}")

    error = _error(response, 400)
    assert error["param"] == param
    assert str(error["message"]).startswith(f"Invalid value for '{param}': ")
    assert fragment in str(error["message"])


@pytest.mark.parametrize(
    "path", ["/nowhere", "/v1/nowhere", "/v1/models/a%0Ab", "/v1/responses/a%0A"]
)
async def test_unknown_paths_inside_and_outside_the_mount_are_404_envelopes(http, path):
    _error(await http.get(path), 404)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/v1/models", "GET"),
        ("GET", "/v1/responses", "POST"),
        ("PUT", "/v1/chat/completions", "POST"),
        ("POST", "/v1/responses/resp_1", "DELETE, GET"),
    ],
)
async def test_a_wrong_method_is_405_with_allow(http, method, path, allow):
    response = await http.request(method, path)

    _error(response, 405)
    assert response.headers["allow"] == allow


async def test_an_exhausted_database_pool_is_503_with_retry_after(
    postgres_pool_factory, postgres_saver
):
    pool = await postgres_pool_factory(max_size=2, timeout=0.2)
    coordinator = PostgresRunCoordinator(pool, max_concurrent_leases=1)
    refund = config(
        refund_graph(postgres_saver, Counter()),
        features={GraphFeature.INTERRUPTS},
        run_coordinator=coordinator,
    )
    app = _app({"refund": refund})
    async with (
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t"
        ) as client,
        coordinator.lease("held by another request"),  # the only lease slot
    ):
        response = await client.post(
            "/v1/responses", json={"model": "refund", "input": "Refund"}
        )

    error = _error(response, 503)
    assert error["type"] == "server_error"
    assert error["code"] == "server_busy"
    assert response.headers["retry-after"] == "1"


async def test_the_default_text_format_is_accepted(http):
    response = await http.post(
        "/v1/responses",
        json={"model": "m", "input": "Hi", "text": {"format": {"type": "text"}}},
    )

    assert response.status_code == 200
    assert response.json()["status"] == "completed"


async def test_a_chat_tool_without_a_description_is_accepted(http):
    tool = {"type": "function", "function": {"name": "f", "description": None}}
    response = await http.post(
        "/v1/chat/completions",
        json={
            "model": "m",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [tool],
        },
    )

    assert response.status_code == 200


def _openapi() -> dict:
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry={"m": config(scripted_graph("x"))}),
        settings=Settings(OPENAI_API_DOCS_ENABLED=True),
    ).bind_openai_api()
    return server.openai_app.openapi()


async def test_the_schema_refuses_what_the_server_refuses(http):
    schema = _openapi()["components"]["schemas"]["ResponseCreateRequest"]
    include = await http.post(
        "/v1/responses", json={"model": "m", "input": "Hi", "include": [""]}
    )
    store = await http.post(
        "/v1/responses", json={"model": "m", "input": "Hi", "store": True}
    )

    assert schema["properties"]["include"]["maxItems"] == 0
    assert True not in schema["properties"]["store"]["enum"]
    assert _error(include, 400)["param"] == "include"
    assert _error(store, 400)["param"] == "store"


def test_every_error_answer_is_documented_with_the_envelope():
    document = _openapi()
    envelope = {"$ref": "#/components/schemas/ErrorResponse"}

    assert "HTTPValidationError" not in document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            errors = {
                status: answer
                for status, answer in operation["responses"].items()
                if status != "200"
            }
            assert "405" in errors, (method, path)
            for answer in errors.values():
                assert answer["content"]["application/json"]["schema"] == envelope
    create = document["paths"]["/responses"]["post"]["responses"]
    assert {"400", "401", "404", "409", "413", "422", "503", "504"} <= set(create)
