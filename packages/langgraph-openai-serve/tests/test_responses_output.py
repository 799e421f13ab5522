"""The Responses API's output through the official ``openai`` SDK, in-process:
the answer message and its usage, stream events that are typed, ordered and
well formed, function calls streamed with one argument delta, statuses as
commentary messages, citations and refusals as their own parts, and how a
Response ends short (incomplete, failed mid-stream, without usage)."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage
from langchain_core.messages.content import create_citation, create_text_block
from langgraph_openai_serve import GraphFeature, status_event
from langgraph_openai_serve.graph.status import client_event
from langgraph_openai_serve.testing import ScriptedChatModel
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter
from support import config, scripted_graph, sse_events, status_graph
from test_responses_input import _calls_then_answer

pytestmark = pytest.mark.anyio

EVENT = TypeAdapter(ResponseStreamEvent)


async def _raw_events(client, model: str, **body) -> list[dict]:
    response = await client._client.post(
        "/v1/responses", json={"model": model, "stream": True, "input": "Hi", **body}
    )
    assert response.status_code == 200
    events = sse_events(response.text)
    for event in events:
        EVENT.validate_python(event)  # every event is a valid SDK type
    return events


def _assert_well_formed(events: list[dict]) -> None:
    numbers = [event["sequence_number"] for event in events]
    assert numbers == sorted(set(numbers))
    assert events[0]["type"] == "response.created"
    assert events[1]["type"] == "response.in_progress"
    added = {
        e["output_index"]: e["item"]["id"]
        for e in events
        if e["type"] == "response.output_item.added"
    }
    done = {
        e["output_index"]: e["item"]["id"]
        for e in events
        if e["type"] == "response.output_item.done"
    }
    assert added == done
    for event in events:
        if "item_id" in event:
            assert added[event["output_index"]] == event["item_id"]


async def test_create_returns_a_final_answer_message_with_usage(make_client):
    client = make_client({"m": config(scripted_graph("Hello from the graph."))})

    response = await client.responses.create(model="m", input="Hi")

    assert response.status == "completed"
    assert response.id.startswith("resp_")
    (message,) = response.output
    assert message.type == "message"
    assert message.phase == "final_answer"
    assert message.content[0].text == "Hello from the graph."
    assert response.output_text == "Hello from the graph."
    assert response.usage.output_tokens == 4
    assert response.usage.total_tokens == response.usage.input_tokens + 4


async def test_stream_events_are_typed_ordered_and_stable(make_client):
    client = make_client({"m": config(scripted_graph("one two three"))})

    events = await _raw_events(client, "m")

    _assert_well_formed(events)
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert deltas == ["one", " two", " three"]
    assert events[-1]["type"] == "response.completed"
    final = events[-1]["response"]
    assert final["output"][0]["content"][0]["text"] == "one two three"
    assert final["usage"]["output_tokens"] == 3


async def test_streamed_function_call_has_one_argument_delta(make_client):
    client = make_client({"m": config(scripted_graph(_calls_then_answer()[0]))})

    events = await _raw_events(client, "m")

    _assert_well_formed(events)
    arg_deltas = [
        e for e in events if e["type"] == "response.function_call_arguments.delta"
    ]
    assert [e["delta"] for e in arg_deltas] == ['{"city": "Oslo"}', "{}"]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [(d["type"], d["status"]) for d in done] == [
        ("function_call", "completed"),
        ("function_call", "completed"),
    ]


async def test_commentary_streams_visible_statuses_as_their_own_messages(make_client):
    graph = status_graph(
        status_event("Searching the archive"),
        status_event("internal bookkeeping", hidden=True),
        client_event("progress", {"percent": 50}),
        {"not": "an lgos event"},
        status_event("Archive searched", done=True, namespace=("search",)),
        answer="Found it.",
    )
    client = make_client({"m": config(graph, features={GraphFeature.CLIENT_EVENTS})})

    events = await _raw_events(client, "m")
    plain = await client.responses.create(model="m", input="Hi")

    _assert_well_formed(events)
    output = events[-1]["response"]["output"]
    assert [(item["phase"], item["content"][0]["text"]) for item in output] == [
        ("commentary", "Searching the archive"),
        ("commentary", "Archive searched"),
        ("final_answer", "Found it."),
    ]
    assert [item.phase for item in plain.output] == ["final_answer"]


async def test_statuses_need_the_client_events_feature(make_client):
    graph = status_graph(status_event("Working"), answer="Done.")
    client = make_client({"m": config(graph)})

    events = await _raw_events(client, "m")

    assert [item["phase"] for item in events[-1]["response"]["output"]] == [
        "final_answer"
    ]


def _cited() -> AIMessage:
    return AIMessage(
        content=[
            create_text_block(
                text="See the docs [1].",
                annotations=[
                    create_citation(
                        url="https://docs.example/a",
                        title="Docs",
                        start_index=8,
                        end_index=11,
                        cited_text="docs",
                    )
                ],
            )
        ]
    )


async def test_citations_become_url_citation_annotations(make_client):
    client = make_client({"m": config(scripted_graph(_cited(), _cited()))})

    response = await client.responses.create(model="m", input="Hi")
    events = await _raw_events(client, "m")

    part = response.output[0].content[0]
    (note,) = part.annotations
    assert (note.type, note.url, note.title) == (
        "url_citation",
        "https://docs.example/a",
        "Docs",
    )
    assert part.text[note.start_index : note.end_index + 1] == "docs"
    added = [e for e in events if e["type"] == "response.output_text.annotation.added"]
    assert [e["annotation"] for e in added] == [note.model_dump()]


async def test_invalid_citation_fails_the_request(make_client):
    bad = AIMessage(
        content=[
            create_text_block(
                text="short",
                annotations=[
                    create_citation(url="https://x", start_index=2, end_index=40)
                ],
            )
        ]
    )
    client = make_client({"m": config(scripted_graph(bad))})

    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="m", input="Hi")


async def test_refusal_is_a_distinct_content_part(make_client):
    refusal = AIMessage(content="", additional_kwargs={"refusal": "I won't do that."})
    client = make_client({"m": config(scripted_graph(refusal, refusal))})

    response = await client.responses.create(model="m", input="Hi")
    events = await _raw_events(client, "m")

    assert [part.type for part in response.output[0].content] == ["refusal"]
    assert response.output[0].content[0].refusal == "I won't do that."
    types = [e["type"] for e in events]
    assert "response.refusal.delta" in types
    assert "response.refusal.done" in types


async def test_truncated_answer_is_incomplete_with_its_reason(make_client):
    truncated = AIMessage(
        content="Partial",
        response_metadata={"finish_reason": "length"},
        invalid_tool_calls=[
            {
                "id": "call_t",
                "name": "lookup",
                "args": '{"q": "unfini',
                "error": "json",
                "type": "invalid_tool_call",
            }
        ],
    )
    client = make_client({"m": config(scripted_graph(truncated, truncated))})

    response = await client.responses.create(model="m", input="Hi")
    events = await _raw_events(client, "m")

    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "max_output_tokens"
    message, call = response.output
    assert message.status == "incomplete"
    assert (call.status, call.arguments) == ("incomplete", '{"q": "unfini')
    assert events[-1]["type"] == "response.incomplete"


async def test_content_filter_is_reported_as_incomplete(make_client):
    filtered = AIMessage(
        content="", response_metadata={"finish_reason": "content_filter"}
    )
    client = make_client({"m": config(scripted_graph(filtered))})

    response = await client.responses.create(model="m", input="Hi")

    assert response.status == "incomplete"
    assert response.incomplete_details.reason == "content_filter"


async def test_failure_mid_stream_keeps_partial_output_marked_incomplete(make_client):
    model = ScriptedChatModel(replies=["half an answer"])

    async def answer_then_fail(state):
        await model.ainvoke(state["messages"])
        raise RuntimeError("secret")

    from support import one_node_graph

    client = make_client({"m": config(one_node_graph(answer_then_fail))})

    events = await _raw_events(client, "m")

    assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
    failed = events[-1]["response"]
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": "server_error",
        "message": "Internal server error",
    }
    (item,) = failed["output"]
    assert item["status"] == "incomplete"
    assert item["content"][0]["text"] == "half an answer"
    assert not any(e["type"] == "response.completed" for e in events)


async def test_usage_is_absent_when_no_model_reports_it(make_client):
    client = make_client({"m": config(scripted_graph("x", "x", report_usage=False))})

    response = await client.responses.create(model="m", input="Hi")
    events = await _raw_events(client, "m")

    assert response.usage is None
    assert events[-1]["response"]["usage"] is None
