"""Streams of background Responses with the in-process backend, through the SDK
(the ``background_client`` and ``background_gate`` fixtures of
``background_fixtures.py``): a resumed stream yields exactly the events
after its cursor, a background stream follows the run live, and a follower
reaching a process that stopped accepting gets a clean, empty end."""

from __future__ import annotations

import asyncio

import httpx
import openai
import pytest
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.backends.memory import MemoryBackend
from lgos_testkit import await_response
from support import one_node_graph, sse_events

pytestmark = pytest.mark.anyio


async def test_resumed_stream_yields_exactly_the_missing_events(
    background_client, background_gate
):
    submitted = await background_client.responses.create(
        model="bg", input="Go", background=True
    )
    done = await await_response(background_client, submitted.id, {"completed"})
    full = await background_client._client.get(
        f"/v1/responses/{submitted.id}", params={"stream": "true"}
    )
    events = sse_events(full.text)
    cut = 3

    resumed = await background_client._client.get(
        f"/v1/responses/{submitted.id}",
        params={"stream": "true", "starting_after": cut},
    )

    rest = sse_events(resumed.text)
    assert [e["sequence_number"] for e in rest] == [
        e["sequence_number"] for e in events[cut + 1 :]
    ]
    assert rest == events[cut + 1 :]
    assert rest[-1]["response"]["output"][0]["content"][0]["text"] == done.output_text


async def test_background_stream_follows_the_run_live(
    background_client, background_gate
):
    async def release_once_running() -> None:
        await background_gate.entered.wait()
        background_gate.release.set()

    # The in-process transport delivers a body once it is complete, so the
    # run is released from a task rather than from inside the stream.
    releaser = asyncio.create_task(release_once_running())
    async with background_client.responses.stream(
        model="gated", input="Go", background=True
    ) as stream:
        final = await stream.get_final_response()
    await releaser

    assert final.output_text == "released"
    assert final.background is True


async def test_a_follower_arriving_at_a_stopped_process_gets_a_clean_end(
    background_gate,
):
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(
            registry={
                "gated": GraphConfig(
                    graph=one_node_graph(background_gate.node),
                    description="gated",
                    features={GraphFeature.BACKGROUND},
                )
            }
        ),
        settings=Settings(),
        backend=MemoryBackend(concurrency=1),
    ).bind_openai_api()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    ) as http:
        background_client = openai.AsyncOpenAI(
            base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
        )
        submitted = await background_client.responses.create(
            model="gated", input="Go", background=True
        )
        await asyncio.wait_for(background_gate.entered.wait(), 30)

        # The process stopped accepting (lgos serve's drain ended) while this
        # follower was on its way: its stream ends at once, cleanly, and the
        # client re-attaches elsewhere from where it was.
        server.lifecycle.stop()
        events = await asyncio.wait_for(_follow(background_client, submitted.id), 30)
        background_gate.release.set()
        done = await await_response(background_client, submitted.id, {"completed"})

    assert events == []
    assert done.output_text == "released"


async def _follow(background_client, response_id):
    stream = await background_client.responses.retrieve(response_id, stream=True)
    return [event async for event in stream]
