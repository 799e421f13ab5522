"""``langchain-openai``'s ``ChatOpenAI`` as a client of a served graph."""

from __future__ import annotations

import httpx
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_openai import ChatOpenAI
from langgraph_openai_serve import GraphRegistry, LanggraphOpenaiServe, Settings
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


@pytest.fixture
async def chat_model():
    weather_call = AIMessage(
        content="",
        tool_calls=[{"id": "call_7", "name": "get_weather", "args": {"city": "Rome"}}],
    )
    graphs = {
        "talker": config(scripted_graph(responder=lambda _: "Ciao from the graph.")),
        "caller": config(scripted_graph(responder=lambda _: weather_call)),
    }
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry=graphs), settings=Settings()
    ).bind_openai_api()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://lgos.test"
    ) as http:

        def make(model: str) -> ChatOpenAI:
            return ChatOpenAI(
                model=model,
                base_url="http://lgos.test/v1",
                api_key="unused",
                http_async_client=http,
                max_retries=0,
                stream_usage=True,
            )

        yield make


async def test_invoke_returns_the_graph_answer(chat_model):
    message = await chat_model("talker").ainvoke([HumanMessage("Hi")])

    assert message.content == "Ciao from the graph."
    assert message.usage_metadata["output_tokens"] == 4


async def test_stream_yields_chunks_that_add_up_to_the_answer(chat_model):
    chunks = [chunk async for chunk in chat_model("talker").astream("Hi")]

    total = sum(chunks[1:], chunks[0])
    assert total.content == "Ciao from the graph."
    assert len([c for c in chunks if c.content]) == 4
    assert total.usage_metadata["output_tokens"] == 4


async def test_tool_calls_parse_into_langchain_tool_calls(chat_model):
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    model = chat_model("caller").bind_tools([get_weather])

    invoked = await model.ainvoke("Weather in Rome?")
    streamed = [chunk async for chunk in model.astream("Weather in Rome?")]

    assert invoked.tool_calls == [
        {
            "name": "get_weather",
            "args": {"city": "Rome"},
            "id": "call_7",
            "type": "tool_call",
        }
    ]
    merged = sum(streamed[1:], streamed[0])
    assert isinstance(merged, AIMessageChunk)
    assert merged.tool_calls[0]["args"] == {"city": "Rome"}
    assert merged.response_metadata["finish_reason"] == "tool_calls"
