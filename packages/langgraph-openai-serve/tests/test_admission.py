"""Admission: a tenant past its foreground runs gets ``429`` at once, the
process past its capacity ``503``, each with ``Retry-After``; nothing waits
for a slot, and the official SDK's own retry gets through once a run ends.

Runs here wait in their graph for the test (``Held``), so how many are
running is fixed by the test, never by timing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import MessagesState
from langgraph_openai_serve import (
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_testkit import async_wait_until
from metrics_support import Scrape
from support import config, one_node_graph

pytestmark = pytest.mark.anyio

PROMPT = 30.0
KEYS = json.dumps({"sk-alice": "alice", "sk-bob": "bob"})


class Held:
    """A graph whose runs wait for ``release``; ``running`` counts them."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.running = 0

    async def node(self, state: MessagesState) -> dict[str, Any]:
        self.running += 1
        try:
            await self.release.wait()
        finally:
            self.running -= 1
        return {"messages": [AIMessage(content="done")]}

    async def until_running(self, count: int) -> None:
        async def there() -> bool:
            return self.running == count

        await async_wait_until(there, PROMPT, f"{count} runs in the graph")


Serve = Callable[..., httpx.AsyncClient]


@pytest.fixture
def held() -> Held:
    return Held()


@pytest.fixture
async def serve(held: Held) -> AsyncIterator[Serve]:
    clients: list[httpx.AsyncClient] = []

    def make(**settings: Any) -> httpx.AsyncClient:
        server = LanggraphOpenaiServe(
            graphs=GraphRegistry(
                registry={
                    "held": config(one_node_graph(held.node)),
                    "held-later": config(
                        one_node_graph(held.node), features={GraphFeature.BACKGROUND}
                    ),
                }
            ),
            settings=Settings(API_KEYS=KEYS, **settings),
        ).bind_openai_api()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=server.app),
            base_url="http://lgos.test",
            timeout=PROMPT,
        )
        clients.append(client)
        return client

    yield make
    held.release.set()
    for client in clients:
        await client.aclose()


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _chat(http: httpx.AsyncClient, key: str, **extra: Any) -> Any:
    return http.post(
        "/v1/chat/completions",
        headers=_as(key),
        json={
            "model": "held",
            "messages": [{"role": "user", "content": "Hi"}],
            **extra,
        },
    )


def _response(http: httpx.AsyncClient, key: str, **extra: Any) -> Any:
    return http.post(
        "/v1/responses",
        headers=_as(key),
        json={"model": "held", "input": "Hi", **extra},
    )


async def test_a_tenant_past_its_runs_gets_429_at_once_and_another_tenant_runs(
    serve, held
):
    http = serve(TENANT_MAX_RUNS=2)
    running = [
        asyncio.create_task(_chat(http, "sk-alice")),
        asyncio.create_task(_response(http, "sk-alice")),
    ]
    await held.until_running(2)

    refused = await _response(http, "sk-alice")
    others = asyncio.create_task(_chat(http, "sk-bob"))
    await held.until_running(3)  # bob's run started beside alice's two
    held.release.set()
    answers = await asyncio.gather(*running, others)

    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert (error["type"], error["code"], error["param"]) == (
        "requests",
        "rate_limit_exceeded",
        None,
    )
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["x-ratelimit-limit-requests"] == "2"
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    # Every run ended released its admission: alice runs again.
    assert (await _chat(http, "sk-alice")).status_code == 200


async def test_a_process_past_its_capacity_answers_503_server_overloaded(serve, held):
    http = serve(MAX_RUNS=2)
    running = [asyncio.create_task(_chat(http, key)) for key in ("sk-alice", "sk-bob")]
    await held.until_running(2)

    refused = await _chat(http, "sk-bob")
    held.release.set()
    answers = await asyncio.gather(*running)

    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "server_overloaded"
    assert refused.headers["retry-after"] == "1"
    assert "x-ratelimit-limit-requests" not in refused.headers
    assert [answer.status_code for answer in answers] == [200, 200]


async def test_a_stream_holds_its_admission_until_it_ends(serve, held):
    http = serve(TENANT_MAX_RUNS=1)
    streaming = asyncio.create_task(_response(http, "sk-alice", stream=True))
    await held.until_running(1)

    during = await _chat(http, "sk-alice")
    held.release.set()
    streamed = await streaming
    after = await _chat(http, "sk-alice", stream=True)

    assert during.status_code == 429
    assert streamed.status_code == 200
    assert "response.completed" in streamed.text
    assert after.status_code == 200


async def test_a_refused_request_leaves_nothing_behind(serve, held):
    http = serve(TENANT_MAX_RUNS=1, RESPONSE_STORE="memory")
    running = asyncio.create_task(_response(http, "sk-alice", store=True))
    await held.until_running(1)

    refused = await _response(http, "sk-alice", store=True)
    held.release.set()
    kept = await running
    listed = await http.get(
        f"/v1/responses/{kept.json()['id']}", headers=_as("sk-alice")
    )

    assert refused.status_code == 429
    assert "id" not in refused.json()
    assert listed.status_code == 200


async def test_a_tenants_own_limit_overrides_the_default(serve, held):
    http = serve(TENANT_MAX_RUNS=1, TENANT_LIMITS={"bob": {"runs": 3}})
    running = [asyncio.create_task(_chat(http, "sk-bob")) for _ in range(3)]
    await held.until_running(3)

    bob_fourth = await _chat(http, "sk-bob")
    alice = asyncio.create_task(_chat(http, "sk-alice"))
    await held.until_running(4)
    alice_second = await _chat(http, "sk-alice")
    held.release.set()
    await asyncio.gather(*running, alice)

    assert bob_fourth.status_code == 429
    assert bob_fourth.headers["x-ratelimit-limit-requests"] == "3"
    assert alice_second.status_code == 429
    assert alice_second.headers["x-ratelimit-limit-requests"] == "1"


async def test_the_sdks_own_retry_gets_through_once_a_run_ended(serve, held):
    http = serve(TENANT_MAX_RUNS=1)
    running = asyncio.create_task(_chat(http, "sk-alice"))
    await held.until_running(1)
    client = openai.AsyncOpenAI(
        base_url="http://lgos.test/v1", api_key="sk-alice", http_client=http
    )

    async def refusals() -> float:
        scraped = Scrape.of((await http.get("/metrics")).text)
        return scraped.value("lgos_requests_refused_total", reason="tenant_runs")

    before = await refusals()
    retried = asyncio.create_task(
        client.chat.completions.create(
            model="held", messages=[{"role": "user", "content": "Hi"}]
        )
    )

    async def refused_once() -> bool:
        return await refusals() > before

    await async_wait_until(refused_once, PROMPT, "the SDK's first try to be refused")
    held.release.set()  # the running one ends: the SDK's retry finds room
    completion = await asyncio.wait_for(retried, PROMPT)
    await running

    assert completion.choices[0].message.content == "done"


async def test_a_tenant_past_its_background_responses_gets_429_and_another_submits(
    serve, held
):
    http = serve(TENANT_MAX_BACKGROUND=2, RESPONSE_STORE="memory")
    queued = [
        await _response(http, "sk-alice", model="held-later", background=True)
        for _ in range(2)
    ]
    await held.until_running(2)

    refused = await _response(http, "sk-alice", model="held-later", background=True)
    bobs = await _response(http, "sk-bob", model="held-later", background=True)
    await held.until_running(3)
    held.release.set()

    async def ended() -> bool:
        for answer in queued:
            polled = await http.get(
                f"/v1/responses/{answer.json()['id']}", headers=_as("sk-alice")
            )
            if polled.json()["status"] != "completed":
                return False
        return True

    await async_wait_until(ended, PROMPT, "alice's background Responses to end")
    again = await _response(http, "sk-alice", model="held-later", background=True)

    assert [answer.status_code for answer in queued] == [200, 200]
    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert (error["type"], error["code"]) == ("requests", "rate_limit_exceeded")
    assert "2 background responses" in error["message"]
    assert refused.headers["retry-after"] == "1"
    # The limit counts queued work, not requests per minute: no such headers.
    assert "x-ratelimit-limit-requests" not in refused.headers
    assert bobs.status_code == 200
    assert again.status_code == 200


async def test_streams_following_background_runs_are_bounded_per_process(serve, held):
    http = serve(MAX_STREAMS=1, RESPONSE_STORE="memory")
    following = asyncio.create_task(
        _response(http, "sk-alice", model="held-later", background=True, stream=True)
    )
    await held.until_running(1)
    queued = await _response(http, "sk-bob", model="held-later", background=True)
    response_id = queued.json()["id"]

    refused = await http.get(
        f"/v1/responses/{response_id}?stream=true", headers=_as("sk-bob")
    )
    refused_create = await _response(
        http, "sk-bob", model="held-later", background=True, stream=True
    )
    jobs = Scrape.of((await http.get("/metrics")).text).value("lgos_background_jobs")
    held.release.set()
    streamed = await following
    again = await http.get(
        f"/v1/responses/{response_id}?stream=true", headers=_as("sk-bob")
    )

    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "server_overloaded"
    assert refused.headers["retry-after"] == "1"
    assert refused_create.status_code == 503
    assert jobs == 2  # refused before anything was queued
    assert "response.completed" in streamed.text
    assert again.status_code == 200
    assert "response.completed" in again.text


def test_none_lifts_a_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("LGOS_MAX_RUNS", "none")
    monkeypatch.setenv("LGOS_TENANT_MAX_RUNS", "")
    monkeypatch.setenv("LGOS_TENANT_MAX_BACKGROUND", "none")
    monkeypatch.setenv(
        "LGOS_TENANT_LIMITS", '{"bob": {"runs": 3, "batches": null, "weight": 2}}'
    )

    settings = Settings()

    assert (settings.MAX_RUNS, settings.TENANT_MAX_RUNS) == (None, None)
    assert settings.TENANT_MAX_BACKGROUND is None
    assert settings.TENANT_MAX_BATCHES == 16
    bob = settings.TENANT_LIMITS["bob"]
    assert (bob.runs, bob.batches, bob.weight) == (3, None, 2.0)
