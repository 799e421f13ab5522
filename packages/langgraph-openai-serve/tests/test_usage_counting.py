"""Usage counts every model call of the run that made it: private
``nostream`` calls, calls in sync nodes, streamed or not, never another
run's."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import BaseMessage
from langgraph.graph import MessagesState
from langgraph_openai_serve.testing import ScriptedChatModel
from support import config, one_node_graph, planner_graph

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Hello"}]
PLANNED = 7
"""Output tokens of ``planner_graph``: "PLAN: think first" (3) and "The
answer is 42." (4)."""


def _planned() -> dict:
    return {"m": config(planner_graph(planner_tags=["nostream"]))}


async def test_a_non_streamed_completion_counts_the_private_planner_call(
    make_client,
):
    client = make_client(_planned())

    completion = await client.chat.completions.create(model="m", messages=USER)

    assert completion.choices[0].message.content == "The answer is 42."
    assert completion.usage.completion_tokens == PLANNED


@pytest.mark.parametrize("stream", [False, True])
async def test_a_response_counts_the_private_planner_call(make_client, stream):
    client = make_client(_planned())

    if stream:
        events = await client.responses.create(model="m", input="Hi", stream=True)
        (done,) = [e async for e in events if e.type == "response.completed"]
        response = done.response
    else:
        response = await client.responses.create(model="m", input="Hi")

    assert response.output_text == "The answer is 42."
    assert response.usage.output_tokens == PLANNED


@pytest.mark.parametrize("stream", [False, True])
async def test_a_model_call_in_a_sync_node_is_counted(make_client, stream):
    # LangGraph runs a sync node in a thread of its own.
    model = ScriptedChatModel(replies=["one two three four five"] * 2)

    def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    client = make_client({"m": config(one_node_graph(answer))})
    completion = await client.chat.completions.create(
        model="m",
        messages=USER,
        stream=stream,
        **({"stream_options": {"include_usage": True}} if stream else {}),
    )
    if stream:
        usage = [chunk async for chunk in completion][-1].usage
    else:
        usage = completion.usage

    assert usage.completion_tokens == 5


async def test_runs_at_once_count_only_their_own_calls(make_client):
    # Each run's node waits until the other run is in its node too, so both
    # model calls are made while both runs are under way.
    arrived = {"long": asyncio.Event(), "short": asyncio.Event()}

    def graph(name: str, other: str, reply: str):
        model = ScriptedChatModel(replies=[reply])

        async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
            arrived[name].set()
            await arrived[other].wait()
            return {"messages": [await model.ainvoke(state["messages"])]}

        return config(one_node_graph(answer))

    client = make_client(
        {
            "long": graph("long", "short", "a b c d e f g h"),
            "short": graph("short", "long", "a b"),
        }
    )
    long_answer, short_answer = await asyncio.gather(
        client.chat.completions.create(model="long", messages=USER),
        client.chat.completions.create(model="short", messages=USER),
    )

    assert long_answer.usage.completion_tokens == 8
    assert short_answer.usage.completion_tokens == 2
