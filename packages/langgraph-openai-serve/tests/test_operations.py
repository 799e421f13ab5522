"""Operating LGOS: API keys, request ids, access logs, CORS, Chat status."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import httpx
import openai
import pytest
from fastapi import Request
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
    request_principal,
    status_event,
)
from support import config, scripted_graph, status_graph

pytestmark = pytest.mark.anyio

KEYS = json.dumps({"sk-alpha": "tenant-a", "sk-beta": "tenant-b"})


def _app(graphs=None, checkpoint_scope=None, **settings):
    graphs = graphs or {"m": config(scripted_graph(responder=lambda _: "ok"))}
    return (
        LanggraphOpenaiServe(
            graphs=GraphRegistry(registry=graphs),
            checkpoint_scope=checkpoint_scope,
            settings=Settings(**settings),
        )
        .bind_openai_api()
        .app
    )


def _client(app, key: str | None = None) -> openai.AsyncOpenAI:
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    )
    return openai.AsyncOpenAI(
        base_url="http://t/v1", api_key=key or "none", http_client=http, max_retries=0
    )


USER = [{"role": "user", "content": "Hi"}]


async def test_api_keys_guard_every_openai_route(monkeypatch):
    app = _app(API_KEYS=KEYS)

    for key in (None, "sk-wrong"):
        client = _client(app, key)
        with pytest.raises(openai.AuthenticationError) as caught:
            await client.models.list()
        assert caught.value.body["code"] == "invalid_api_key"
        assert caught.value.response.headers["www-authenticate"] == "Bearer"
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="m", messages=USER)
        with pytest.raises(openai.AuthenticationError):
            await client.responses.create(model="m", input="Hi")

    good = _client(app, "sk-beta")
    assert [m.id for m in (await good.models.list()).data] == ["m"]
    completion = await good.chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "ok"


async def test_health_stays_open_with_api_keys():
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app(API_KEYS="sk-one,sk-two")),
        base_url="http://t",
    ) as http:
        response = await http.get("/v1/health")

    assert response.status_code == 200


async def test_request_principal_names_the_tenant_behind_the_key():
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry={"m": config(scripted_graph("x"))}),
        checkpoint_scope=lambda request: request_principal(request) or "default",
        settings=Settings(API_KEYS=KEYS),
    ).bind_openai_api()

    @server.openai_app.get("/whoami")
    async def whoami(request: Request) -> dict[str, str | None]:
        return {
            "principal": request_principal(request),
            "scope": server.checkpoint_scope(request),  # type: ignore[dict-item]
        }

    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    ) as http:
        alpha = await http.get(
            "/v1/whoami", headers={"Authorization": "Bearer sk-alpha"}
        )
        beta = await http.get("/v1/whoami", headers={"Authorization": "Bearer sk-beta"})

    assert alpha.json() == {"principal": "tenant-a", "scope": "tenant-a"}
    assert beta.json() == {"principal": "tenant-b", "scope": "tenant-b"}


@pytest.mark.parametrize("bad", ["", "has space", "x" * 200, "new\nline"])
async def test_invalid_incoming_request_ids_are_replaced(bad):
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app()), base_url="http://t"
    ) as http:
        headers = {"X-Request-ID": bad} if "\n" not in bad else {}
        response = await http.get("/v1/models", headers=headers)

    assert len(response.headers["x-request-id"]) == 32
    assert response.headers["x-request-id"] != bad


async def test_valid_request_ids_are_echoed_on_success_and_error():
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app()), base_url="http://t"
    ) as http:
        ok = await http.get("/v1/models", headers={"X-Request-ID": "req-123"})
        missing = await http.get("/v1/models/nope", headers={"X-Request-ID": "req-456"})
        invalid = await http.post(
            "/v1/chat/completions", json={}, headers={"X-Request-ID": "req-789"}
        )

    assert ok.headers["x-request-id"] == "req-123"
    assert missing.headers["x-request-id"] == "req-456"
    assert invalid.headers["x-request-id"] == "req-789"


async def test_access_log_records_model_status_duration_and_stream_outcome(caplog):
    model = "m"
    app = _app()
    client = _client(app)

    with caplog.at_level(logging.INFO, logger="langgraph_openai_serve.access"):
        await client.chat.completions.create(model=model, messages=USER)
        stream = await client.responses.create(model=model, input="Hi", stream=True)
        _ = [event async for event in stream]
        with pytest.raises(openai.NotFoundError):
            await client.chat.completions.create(model="nope", messages=USER)

    records = [
        r for r in caplog.records if r.getMessage().startswith("request.completed")
    ]
    assert [(r.path, r.model, r.status, r.stream_outcome) for r in records] == [
        ("/chat/completions", "m", 200, None),
        ("/responses", "m", 200, "completed"),
        ("/chat/completions", None, 404, None),
    ]
    assert all(len(r.request_id) == 32 and r.duration_ms >= 0 for r in records)


async def test_failed_stream_is_logged_as_failed(caplog):
    app = _app({"m": config(scripted_graph(RuntimeError("boom")))})
    client = _client(app)

    with caplog.at_level(logging.INFO, logger="langgraph_openai_serve.access"):
        stream = await client.chat.completions.create(
            model="m", messages=USER, stream=True
        )
        with pytest.raises(openai.APIError):
            _ = [chunk async for chunk in stream]

    (record,) = [
        r for r in caplog.records if r.getMessage().startswith("request.completed")
    ]
    assert record.stream_outcome == "failed"


async def test_cors_origins_setting_allows_listed_browser_origins():
    app = _app(CORS_ORIGINS=["https://ui.example"], API_KEYS=KEYS)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as http:
        preflight = await http.options(
            "/v1/chat/completions",
            headers={
                "Origin": "https://ui.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        other = await http.options(
            "/v1/chat/completions",
            headers={
                "Origin": "https://evil.example",
                "Access-Control-Request-Method": "POST",
            },
        )

    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://ui.example"
    assert "access-control-allow-origin" not in other.headers


def _status_chat(**settings):
    graph = status_graph(
        status_event("Searching"),
        status_event("secret step", hidden=True),
        answer="Found it.",
    )
    return _client(
        _app({"m": config(graph, features={GraphFeature.CLIENT_EVENTS})}, **settings)
    )


async def _chat_deltas(client):
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    return [chunk.choices[0].delta async for chunk in stream if chunk.choices]


async def test_chat_status_as_reasoning_is_off_by_default():
    deltas = await _chat_deltas(_status_chat())

    assert all("reasoning_content" not in (d.model_extra or {}) for d in deltas)
    assert "".join(d.content or "" for d in deltas) == "Found it."


async def test_chat_status_as_reasoning_forwards_visible_statuses():
    deltas = await _chat_deltas(_status_chat(CHAT_STATUS_AS_REASONING=True))

    reasoning = [
        d.model_extra["reasoning_content"]
        for d in deltas
        if "reasoning_content" in (d.model_extra or {})
    ]
    assert reasoning == ["Searching\n"]
    assert "".join(d.content or "" for d in deltas) == "Found it."


def _context_graph(schema):
    async def answer(state: MessagesState, runtime: Runtime):
        return {"messages": [AIMessage(content=f"context={runtime.context!r}")]}

    builder = StateGraph(MessagesState, context_schema=schema)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


@dataclass
class Server:
    tenant: str


async def test_context_factory_may_return_none_or_a_server_owned_context(make_client):
    async def tenant_context(request, settings):
        return Server(tenant=request.user or "anon")

    client = make_client(
        {
            "none": config(_context_graph(None), context_factory=lambda r, s: None),
            "tenant": config(_context_graph(Server), context_factory=tenant_context),
            "broken": config(_context_graph(None), context_factory=tenant_context),
        }
    )

    none = await client.chat.completions.create(model="none", messages=USER)
    tenant = await client.chat.completions.create(
        model="tenant", messages=USER, user="acme"
    )
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="broken", messages=USER)

    assert none.choices[0].message.content == "context=None"
    assert tenant.choices[0].message.content == "context=Server(tenant='acme')"
