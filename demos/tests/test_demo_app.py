"""The demo API that ``just up`` serves, through the official SDK."""

from __future__ import annotations

import httpx
import pytest
from lgos_demos.app import create_app
from openai import AsyncOpenAI

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client():
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app()), base_url="http://demo"
    ) as http:
        yield AsyncOpenAI(
            base_url="http://demo/v1", api_key="unused", http_client=http, max_retries=0
        )


async def test_demo_lists_its_example_graphs_with_descriptions(client):
    page = await client.models.list()

    descriptions = {m.id: m.model_extra["lgos"]["description"] for m in page.data}
    assert set(descriptions) == {"echo", "planner"}
    assert all(descriptions.values())


async def test_echo_streams_a_reply_quoting_the_user(client):
    stream = await client.chat.completions.create(
        model="echo",
        messages=[{"role": "user", "content": "ping from the test"}],
        stream=True,
    )
    text = "".join(
        [c.choices[0].delta.content or "" async for c in stream if c.choices]
    )

    assert text.startswith("You said: ping from the test.")


async def test_planner_streams_only_its_answer_node(client):
    stream = await client.chat.completions.create(
        model="planner",
        messages=[{"role": "user", "content": "why?"}],
        stream=True,
    )
    text = "".join(
        [c.choices[0].delta.content or "" async for c in stream if c.choices]
    )

    assert "plan:" not in text
    assert text.endswith("replied to: why?")
