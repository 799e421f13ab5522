"""The demo model over HTTP, as OpenAI clients and ``langchain-openai`` use it."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from lgos_demos.demo_model.app import create_app
from openai import OpenAI


@pytest.fixture(scope="module")
def model(stack):
    with OpenAI(base_url=stack.model_url, api_key="any", max_retries=0) as client:
        yield client


def test_streams_with_usage_when_asked(model):
    chunks = list(
        model.chat.completions.create(
            model="anything",
            messages=[{"role": "user", "content": "Hi there"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("You said: “Hi there”.")
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage.completion_tokens == len(
        [c for c in chunks if c.choices and c.choices[0].delta.content]
    )


def test_harmless_parameters_are_accepted_and_limits_apply(model):
    reply = model.chat.completions.create(
        model="gpt-whatever",
        messages=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
        temperature=0.2,
        top_p=0.9,
        seed=7,
        presence_penalty=0,
        frequency_penalty=0,
        user="u1",
        metadata={"k": "v"},
        store=False,
        max_completion_tokens=3,
        n=2,
    )

    assert [c.index for c in reply.choices] == [0, 1]
    assert reply.choices[0].finish_reason == "length"
    assert reply.choices[0].message.content == "You said: “Hi”."
    assert reply.model == "gpt-whatever"


def test_streamed_tool_calls_reassemble(model):
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    chunks = list(
        model.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "Weather in Lisbon?"}],
            tools=[weather],
            stream=True,
        )
    )

    deltas = [
        d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []
    ]
    arguments = "".join(d.function.arguments or "" for d in deltas)
    assert deltas[0].function.name == "get_weather"
    assert json.loads(arguments) == {"city": "Lisbon"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_custom_tools_are_called_in_openai_s_custom_shape(stack):
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Which version of httpx is installed?"}
        ],
        "tools": [
            {
                "type": "custom",
                "custom": {"name": "package_version", "description": "x"},
            }
        ],
    }

    reply = httpx.post(f"{stack.model_url}/chat/completions", json=body).json()

    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert call["type"] == "custom"
    assert call["custom"] == {"name": "package_version", "input": "httpx"}


def test_langchain_chat_openai_streams_tool_calls_and_usage(stack):
    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return "shipped"

    chat = ChatOpenAI(
        model="demo", base_url=stack.model_url, api_key="k", stream_usage=True
    ).bind_tools([lookup_order])

    async def run() -> list:
        return [c async for c in chat.astream([HumanMessage("Where is order-42?")])]

    chunks = asyncio.run(run())
    message = chunks[0]
    for chunk in chunks[1:]:
        message = message + chunk

    assert message.tool_calls[0]["name"] == "lookup_order"
    assert message.tool_calls[0]["args"] == {"order_id": "order-42"}
    assert message.usage_metadata["output_tokens"] > 0


def test_a_body_that_is_no_chat_request_is_a_400_envelope(stack):
    response = httpx.post(f"{stack.model_url}/chat/completions", json={"model": "m"})

    assert response.status_code == 400
    assert response.json()["error"]["param"] == "messages"


def test_tokens_are_paced_by_the_configured_delay():
    app = create_app(model_name="demo", token_delay=0.05)
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
    }

    async def stream() -> tuple[float, int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://m") as http:
            started = time.monotonic()
            response = await http.post("/v1/chat/completions", json=body)
            tokens = response.text.count('"content": "') - 1  # minus the opening ""
            return time.monotonic() - started, tokens

    elapsed, tokens = asyncio.run(stream())

    assert tokens > 10
    assert elapsed >= tokens * 0.05 * 0.9
