"""Kept Responses and Conversations through the clients built on them: the
OpenAI Agents SDK (``previous_response_id``, ``conversation_id`` and
``OpenAIConversationsSession``) and ``langchain-openai``
(``use_previous_response_id``). The graph answers with the transcript it saw,
so each test proves the earlier turns reached it without being resent."""

from __future__ import annotations

import httpx
import pytest
from agents import (
    Agent,
    OpenAIConversationsSession,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph_openai_serve import GraphRegistry, LanggraphOpenaiServe, Settings
from langgraph_openai_serve.testing import ScriptedChatModel
from openai import AsyncOpenAI
from stored_app import transcript
from support import config, single_model_graph

pytestmark = pytest.mark.anyio


class Recorded(httpx.AsyncBaseTransport):
    """The in-process app, remembering each Responses request body."""

    def __init__(self, app) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.bodies: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/v1/responses":
            self.bodies.append(await request.aread())
        return await self.inner.handle_async_request(request)


@pytest.fixture
async def served():
    set_tracing_disabled(True)
    graphs = {
        "history": config(single_model_graph(ScriptedChatModel(responder=transcript)))
    }
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=graphs),
        settings=Settings(RESPONSE_STORE="memory"),
    ).bind_openai_api()
    transport = Recorded(server.app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://lgos.test"
    ) as http:
        yield http, transport


def _openai(http) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url="http://lgos.test/v1",
        api_key="unused",
        http_client=http,
        max_retries=0,
    )


def _agent(http) -> Agent:
    return Agent(
        name="assistant",
        instructions="Answer briefly.",
        model=OpenAIResponsesModel(model="history", openai_client=_openai(http)),
    )


async def test_agents_sdk_previous_response_id_sends_only_the_new_turn(served):
    http, transport = served
    agent = _agent(http)

    first = await Runner.run(agent, "My name is Ada.")
    second = await Runner.run(
        agent, "Who am I?", previous_response_id=first.last_response_id
    )

    assert second.final_output.endswith(
        f"human:My name is Ada. | ai:{first.final_output} | human:Who am I?"
    )
    assert b"My name is Ada." not in transport.bodies[-1]


async def test_agents_sdk_conversation_id_continues_a_conversation(served):
    http, transport = served
    agent = _agent(http)
    conversation = await _openai(http).conversations.create()

    first = await Runner.run(agent, "I like tea.", conversation_id=conversation.id)
    second = await Runner.run(agent, "What do I like?", conversation_id=conversation.id)

    assert second.final_output.endswith(
        f"human:I like tea. | ai:{first.final_output} | human:What do I like?"
    )
    assert b"I like tea." not in transport.bodies[-1]


async def test_agents_sdk_conversations_session_keeps_the_history(served):
    http, _ = served
    agent = _agent(http)
    session = OpenAIConversationsSession(openai_client=_openai(http))

    first = await Runner.run(agent, "My name is Ada.", session=session)
    second = await Runner.run(agent, "Who am I?", session=session)

    assert second.final_output.endswith(
        f"human:My name is Ada. | ai:{first.final_output} | human:Who am I?"
    )
    kept = await session.get_items()
    assert [item["role"] for item in kept] == ["user", "assistant"] * 2
    assert (await session.pop_item())["role"] == "assistant"
    assert len(await session.get_items()) == 3
    await session.clear_session()


async def test_langchain_openai_use_previous_response_id_sends_only_new_messages(
    served,
):
    http, transport = served
    model = ChatOpenAI(
        model="history",
        base_url="http://lgos.test/v1",
        api_key="unused",
        http_async_client=http,
        max_retries=0,
        use_responses_api=True,
        use_previous_response_id=True,
    )

    first = await model.ainvoke([HumanMessage("My name is Ada.")])
    second = await model.ainvoke(
        [HumanMessage("My name is Ada."), first, HumanMessage("Who am I?")]
    )

    assert second.text == (
        f"Saw human:My name is Ada. | ai:{first.text} | human:Who am I?"
    )
    assert b"My name is Ada." not in transport.bodies[-1]
    assert b"previous_response_id" in transport.bodies[-1]
