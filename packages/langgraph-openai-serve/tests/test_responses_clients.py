"""Responses through the OpenAI Agents SDK and ``langchain-openai``."""

from __future__ import annotations

import uuid

import httpx
import pytest
from agents import (
    Agent,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from langchain_core.messages import AIMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph_openai_serve import GraphRegistry, LanggraphOpenaiServe, Settings
from langgraph_openai_serve.testing import ScriptedChatModel
from openai import AsyncOpenAI
from support import config, scripted_graph, single_model_graph

pytestmark = pytest.mark.anyio


def _weather_agent_reply(messages):
    """Call get_weather once, then answer from its result."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return f"The weather service says: {last.content}"
    return AIMessage(
        content="",
        tool_calls=[
            {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "name": "get_weather",
                "args": {"city": "Lyon"},
            }
        ],
    )


@pytest.fixture
async def http():
    set_tracing_disabled(True)
    graphs = {
        "talker": config(scripted_graph(responder=lambda _: "Bonjour from the graph.")),
        "weather": config(
            single_model_graph(ScriptedChatModel(responder=_weather_agent_reply))
        ),
    }
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=graphs), settings=Settings()
    ).bind_openai_api()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://lgos.test"
    ) as client:
        yield client


def _agent(http, model: str, **options) -> Agent:
    openai_client = AsyncOpenAI(
        base_url="http://lgos.test/v1",
        api_key="unused",
        http_client=http,
        max_retries=0,
    )
    return Agent(
        name="assistant",
        instructions="Answer briefly.",
        model=OpenAIResponsesModel(model=model, openai_client=openai_client),
        **options,
    )


async def test_agents_sdk_runner_run_returns_the_graph_answer(http):
    result = await Runner.run(_agent(http, "talker"), "Hello")

    assert result.final_output == "Bonjour from the graph."


async def test_agents_sdk_run_streamed_streams_text_deltas(http):
    result = Runner.run_streamed(_agent(http, "talker"), "Hello")
    deltas = [
        event.data.delta
        async for event in result.stream_events()
        if event.type == "raw_response_event"
        and event.data.type == "response.output_text.delta"
    ]

    assert "".join(deltas) == "Bonjour from the graph."
    assert len(deltas) == 4
    assert result.final_output == "Bonjour from the graph."


async def test_agents_sdk_function_tool_round_trip(http):
    calls = []

    @function_tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return f"sunny in {city}"

    result = await Runner.run(_agent(http, "weather", tools=[get_weather]), "Weather?")

    assert calls == ["Lyon"]
    assert result.final_output == "The weather service says: sunny in Lyon"


def _responses_model(http, model: str) -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url="http://lgos.test/v1",
        api_key="unused",
        http_async_client=http,
        max_retries=0,
        use_responses_api=True,
    )


async def test_langchain_openai_responses_invoke(http):
    message = await _responses_model(http, "talker").ainvoke("Hello")

    assert message.text == "Bonjour from the graph."
    assert message.usage_metadata["output_tokens"] == 4


async def test_langchain_openai_responses_stream(http):
    chunks = [
        chunk async for chunk in _responses_model(http, "talker").astream("Hello")
    ]

    merged = sum(chunks[1:], chunks[0])
    assert merged.text == "Bonjour from the graph."
    assert len([c for c in chunks if c.text]) == 4


async def test_langchain_openai_responses_tool_calls(http):
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return "sunny"

    model = _responses_model(http, "weather").bind_tools([get_weather])

    invoked = await model.ainvoke("Weather?")
    streamed = [chunk async for chunk in model.astream("Weather?")]

    assert [(c["name"], c["args"]) for c in invoked.tool_calls] == [
        ("get_weather", {"city": "Lyon"})
    ]
    merged = sum(streamed[1:], streamed[0])
    assert [(c["name"], c["args"]) for c in merged.tool_calls] == [
        ("get_weather", {"city": "Lyon"})
    ]
