"""Chaining turns on a deployment that keeps Responses.

A real LGOS server with ``LGOS_RESPONSE_STORE=memory`` (its models say
``stores_responses``) and a graph that answers with the transcript it saw:
each turn after the first names the previous Response and sends only what it
does not cover, and the graph still sees the whole conversation. When the
server no longer has that Response, the turn replays the ledger instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_chainlit.catalog import LgosCatalog
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.conversation import Conversation
from lgos_chainlit.events import AnswerDelta, TurnFinished
from lgos_testkit import ThreadServer
from lgos_testkit.graphs import transcript_graph
from openai import AsyncOpenAI
from ui_support import collect

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def keeping_lgos() -> Iterator[str]:
    registry = {
        "history": GraphConfig(graph=transcript_graph(), description="transcript"),
        "history-bg": GraphConfig(
            graph=transcript_graph(),
            description="transcript, in the background",
            features={GraphFeature.BACKGROUND},
        ),
    }
    app = FastAPI()
    LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=registry),
        app=app,
        settings=Settings(RESPONSE_STORE="memory"),
    ).bind_openai_api()
    with ThreadServer(app) as server:
        yield f"{server.url}/v1"


class Bodies(httpx.AsyncBaseTransport):
    """Real HTTP, remembering each ``POST /responses`` body."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/responses"):
            self.sent.append(json.loads(await request.aread()))
        return await self.inner.handle_async_request(request)


@pytest.fixture
async def sdk(keeping_lgos) -> AsyncIterator[tuple[AsyncOpenAI, Bodies]]:
    bodies = Bodies()
    http = httpx.AsyncClient(transport=bodies, timeout=30)
    client = AsyncOpenAI(
        base_url=keeping_lgos, api_key="ui", http_client=http, max_retries=0
    )
    yield client, bodies
    await client.close()


async def _chat(client: AsyncOpenAI, store: ChatStore, model: str, **state: Any):
    """A Conversation on the saved state, like a (re)loaded page."""
    graph = await LgosCatalog(client).describe(model)
    chat_state = store.load("thread") or ChatState(thread_id="thread", model=model)
    for key, value in state.items():
        setattr(chat_state, key, value)
    return Conversation(client, graph, chat_state, store)


async def _say(chat: Conversation, text: str) -> tuple[str, str]:
    events = await collect(chat.send(text))
    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.status == "completed", events
    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    return answer, finished.response_id


def _texts(body: dict[str, Any]) -> list[str]:
    return [part["text"] for item in body["input"] for part in item["content"]]


async def test_each_turn_names_the_last_response_and_sends_only_itself(sdk, tmp_path):
    client, bodies = sdk
    store = ChatStore(tmp_path)
    chat = await _chat(client, store, "history")

    first, first_id = await _say(chat, "My name is Ada.")
    second, _ = await _say(chat, "Who am I?")

    assert chat.graph.stores_responses
    assert "previous_response_id" not in bodies.sent[0]
    assert bodies.sent[0]["store"] is True
    assert bodies.sent[1]["previous_response_id"] == first_id
    assert _texts(bodies.sent[1]) == ["Who am I?"]
    assert second == f"Saw human:My name is Ada. | ai:{first} | human:Who am I?"
    # The ledger still holds the whole chat.
    assert len(chat.ledger) == 4


async def test_a_reloaded_chat_continues_the_saved_chain(sdk, tmp_path):
    client, bodies = sdk
    store = ChatStore(tmp_path)
    _, first_id = await _say(await _chat(client, store, "history"), "One.")

    reloaded = await _chat(client, store, "history")
    answer, _ = await _say(reloaded, "Two.")

    assert bodies.sent[-1]["previous_response_id"] == first_id
    assert answer.startswith("Saw human:One. | ai:Saw human:One. | human:Two.")


async def test_a_response_the_server_lost_makes_the_turn_replay_the_ledger(
    sdk, tmp_path
):
    client, bodies = sdk
    store = ChatStore(tmp_path)
    chat = await _chat(client, store, "history")
    first, first_id = await _say(chat, "One.")
    await client.responses.delete(first_id)

    second, second_id = await _say(chat, "Two.")
    third, _ = await _say(chat, "Three.")

    chained, replayed = bodies.sent[-3], bodies.sent[-2]
    assert chained["previous_response_id"] == first_id
    assert "previous_response_id" not in replayed
    assert _texts(replayed) == ["One.", first, "Two."]
    assert second == f"Saw human:One. | ai:{first} | human:Two."
    # A new chain starts at the replayed turn.
    assert bodies.sent[-1]["previous_response_id"] == second_id
    assert third.endswith(f"ai:{second} | human:Three.")


async def test_background_turns_chain_as_well(sdk, tmp_path):
    client, bodies = sdk
    store = ChatStore(tmp_path)
    chat = await _chat(client, store, "history-bg", background=True)

    first, first_id = await _say(chat, "Quietly, one.")
    second, _ = await _say(chat, "Quietly, two.")

    assert all(body["background"] is True for body in bodies.sent)
    assert bodies.sent[-1]["previous_response_id"] == first_id
    assert second.endswith(f"ai:{first} | human:Quietly, two.")


async def test_a_stateless_server_still_gets_the_whole_ledger(
    make_conversation, recorder
):
    chat = await make_conversation("echo")

    await collect(chat.send("One."))
    await collect(chat.send("Two."))

    assert not chat.graph.stores_responses
    assert "previous_response_id" not in recorder.bodies[-1]
    assert recorder.bodies[-1]["store"] is False
    said = [
        item["content"][0]["text"]
        for item in recorder.bodies[-1]["input"]
        if item.get("role") == "user"
    ]
    assert said == ["One.", "Two."]
