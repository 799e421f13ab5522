"""Golden SSE transcripts of Responses streams (ids and times normalized)."""

from __future__ import annotations

import pytest
from interrupt_graphs import QUESTION
from langchain_core.messages import AIMessage
from langchain_core.messages.content import create_citation, create_text_block
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    InMemoryRunCoordinator,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit.graphs import two_approvers_graph
from support import (
    assert_golden,
    config,
    normalize_ids,
    one_node_graph,
    scripted_graph,
    sse_events,
    status_graph,
)

pytestmark = pytest.mark.anyio


async def _transcript(make_client, graph_config) -> str:
    client = make_client({"m": graph_config})
    response = await client._client.post(
        "/v1/responses", json={"model": "m", "input": "Hi", "stream": True}
    )
    assert response.status_code == 200
    sse_events(response.text)  # every frame is well-formed
    return normalize_ids(response.text)


async def test_text(make_client):
    transcript = await _transcript(make_client, config(scripted_graph("Hello there")))

    assert_golden("responses_text.sse", transcript)


async def test_commentary(make_client):
    graph = status_graph(status_event("Looking it up"), answer="Found.")
    transcript = await _transcript(
        make_client, config(graph, features={GraphFeature.CLIENT_EVENTS})
    )

    assert_golden("responses_commentary.sse", transcript)


async def test_citations(make_client):
    cited = AIMessage(
        content=[
            create_text_block(
                text="See docs.",
                annotations=[
                    create_citation(
                        url="https://docs.example",
                        title="Docs",
                        start_index=4,
                        end_index=7,
                    )
                ],
            )
        ]
    )
    transcript = await _transcript(make_client, config(scripted_graph(cited)))

    assert_golden("responses_citations.sse", transcript)


async def test_function_calls(make_client):
    call = AIMessage(
        content="",
        tool_calls=[{"id": "call_1", "name": "lookup", "args": {"q": "lgos"}}],
    )
    transcript = await _transcript(make_client, config(scripted_graph(call)))

    assert_golden("responses_function_call.sse", transcript)


async def test_refusal(make_client):
    refusal = AIMessage(content="", additional_kwargs={"refusal": "Not that."})
    transcript = await _transcript(make_client, config(scripted_graph(refusal)))

    assert_golden("responses_refusal.sse", transcript)


async def test_incomplete(make_client):
    cut = AIMessage(content="Cut short", response_metadata={"finish_reason": "length"})
    transcript = await _transcript(make_client, config(scripted_graph(cut)))

    assert_golden("responses_incomplete.sse", transcript)


async def test_failure_mid_stream(make_client):
    model = ScriptedChatModel(replies=["Half"])

    async def answer_then_fail(state):
        await model.ainvoke(state["messages"])
        raise RuntimeError("boom")

    transcript = await _transcript(
        make_client, config(one_node_graph(answer_then_fail))
    )

    assert_golden("responses_failed.sse", transcript)


def _interrupt_config(graph) -> GraphConfig:
    return GraphConfig(
        graph=graph,
        description="asks first",
        features={GraphFeature.INTERRUPTS},
        run_coordinator=InMemoryRunCoordinator(),
    )


def _think_then_ask_graph():
    """Streams a sentence, then pauses in the next node."""
    model = ScriptedChatModel(replies=["Checking the order."])

    async def think(state: MessagesState):
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def ask(state: MessagesState):
        interrupt(QUESTION)
        return {"messages": []}

    builder = StateGraph(MessagesState)
    builder.add_node("think", think)
    builder.add_node("ask", ask)
    builder.add_edge(START, "think")
    builder.add_edge("think", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=InMemorySaver())


async def test_pause_after_streamed_text(make_client):
    transcript = await _transcript(
        make_client, _interrupt_config(_think_then_ask_graph())
    )

    assert_golden("responses_paused_after_text.sse", transcript)


async def test_pause_with_parallel_interrupts(make_client):
    transcript = await _transcript(
        make_client, _interrupt_config(two_approvers_graph(InMemorySaver()))
    )

    assert_golden("responses_paused_parallel.sse", transcript)


async def test_paused_body_matches_golden(make_client):
    client = make_client({"m": _interrupt_config(_think_then_ask_graph())})
    response = await client._client.post(
        "/v1/responses", json={"model": "m", "input": "Hi"}
    )

    assert_golden("responses_paused_body.json", normalize_ids(response.text))
