"""Chat streams: golden SSE transcripts and which model text is the answer."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve.testing import ScriptedChatModel
from support import (
    assert_golden,
    config,
    normalize_ids,
    one_node_graph,
    planner_graph,
    scripted_graph,
)

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Hello"}]


async def _raw_stream(make_client, graph, **body) -> str:
    client = make_client({"m": config(graph)})
    response = await client._client.post(
        "/v1/chat/completions",
        json={"model": "m", "messages": USER, "stream": True, **body},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return normalize_ids(response.text)


async def test_text_stream_matches_golden_transcript(make_client):
    transcript = await _raw_stream(make_client, scripted_graph("Hello there world"))

    assert_golden("chat_text.sse", transcript)


async def test_tool_call_stream_matches_golden_transcript(make_client):
    reply = AIMessage(
        content="Checking.",
        tool_calls=[{"id": "call_1", "name": "get_weather", "args": {"city": "Oslo"}}],
    )

    transcript = await _raw_stream(make_client, scripted_graph(reply))

    assert_golden("chat_tool_calls.sse", transcript)


async def test_usage_stream_matches_golden_transcript(make_client):
    transcript = await _raw_stream(
        make_client,
        scripted_graph("Two words"),
        stream_options={"include_usage": True},
    )

    assert_golden("chat_usage.sse", transcript)


async def test_failure_mid_stream_ends_with_an_error_chunk_then_done(make_client):
    model = ScriptedChatModel(replies=["partial answer"])

    async def answer_then_fail(state):
        await model.ainvoke(state["messages"])
        raise RuntimeError("secret detail")

    transcript = await _raw_stream(make_client, one_node_graph(answer_then_fail))

    assert_golden("chat_error.sse", transcript)
    assert "secret detail" not in transcript


async def _streamed_text(make_client, graph_config) -> tuple[str, list]:
    client = make_client({"m": graph_config})
    stream = await client.chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return text, chunks


async def test_nostream_planner_call_stays_out_of_the_answer(make_client):
    text, chunks = await _streamed_text(
        make_client, config(planner_graph(planner_tags=["nostream"]))
    )

    assert text == "The answer is 42."
    assert chunks[-2].choices[0].finish_reason == "stop"


async def test_streamable_node_names_select_the_answer_node(make_client):
    text, _ = await _streamed_text(
        make_client, config(planner_graph(), streamable_node_names=["answer"])
    )

    assert text == "The answer is 42."


async def test_usage_counts_private_planner_calls_too(make_client):
    _, chunks = await _streamed_text(
        make_client, config(planner_graph(planner_tags=["nostream"]))
    )

    # "PLAN: think first" is 3 tokens, "The answer is 42." 4 tokens.
    assert chunks[-1].usage.completion_tokens == 7


async def test_planner_text_leaking_into_the_stream_fails_the_stream(make_client):
    client = make_client({"m": config(planner_graph())})

    response = await client._client.post(
        "/v1/chat/completions", json={"model": "m", "messages": USER, "stream": True}
    )

    frames = [f for f in response.text.split("\n\n") if f]
    assert frames[-2:] == [
        'data: {"error":{"message":"Internal server error","type":"server_error",'
        '"param":null,"code":"server_error"}}',
        "data: [DONE]",
    ]
    assert '"finish_reason":"stop"' not in response.text


async def test_answer_not_streamed_by_any_model_is_sent_whole(make_client):
    async def fixed(state):
        return {"messages": [AIMessage(content="Computed without a model.")]}

    text, _ = await _streamed_text(make_client, config(one_node_graph(fixed)))

    assert text == "Computed without a model."


async def test_a_sync_nodes_model_streams_its_answer_token_by_token(make_client):
    model = ScriptedChatModel(replies=["Streamed from a worker thread."])

    def answer(state):  # sync: LangGraph runs it in a worker thread
        return {"messages": [model.invoke(state["messages"])]}

    text, chunks = await _streamed_text(make_client, config(one_node_graph(answer)))

    assert text == "Streamed from a worker thread."
    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    tokens = ["Streamed", " from", " a", " worker", " thread."]
    assert [d for d in deltas if d] == tokens


async def test_a_subgraphs_model_text_stays_out_of_the_answer(make_client):
    notes = ScriptedChatModel(replies=["Private sub-agent notes."])
    answerer = ScriptedChatModel(replies=["The answer is 42."])

    async def take_notes(state):
        await notes.ainvoke(state["messages"])
        return {"messages": []}

    async def answer(state):
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("research", one_node_graph(take_notes, name="notes"))
    builder.add_node("answer", answer)
    builder.add_edge(START, "research")
    builder.add_edge("research", "answer")
    builder.add_edge("answer", END)

    text, chunks = await _streamed_text(make_client, config(builder.compile()))

    assert text == "The answer is 42."
    assert chunks[-2].choices[0].finish_reason == "stop"
