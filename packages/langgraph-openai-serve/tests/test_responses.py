"""The Responses API through the official ``openai`` SDK, in-process."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.content import create_citation, create_text_block
from langgraph_openai_serve import (
    ClientFunctionTool,
    GraphFeature,
    NamedFunctionToolChoice,
    status_event,
)
from langgraph_openai_serve.graph.status import client_event
from langgraph_openai_serve.testing import ScriptedChatModel
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter
from support import config, scripted_graph, single_model_graph, sse_events, status_graph

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


async def test_stream_helper_final_response_replays_into_a_follow_up(make_client):
    seen = []

    def respond(messages):
        seen.append(messages)
        return f"Answer {len(seen)}."

    client = make_client(
        {"m": config(single_model_graph(ScriptedChatModel(responder=respond)))}
    )

    async with client.responses.stream(model="m", input="First?") as stream:
        async for _ in stream:
            pass
        first = await stream.get_final_response()
    follow_up = [
        {"role": "user", "content": "First?"},
        *[item.model_dump() for item in first.output],
        {"role": "user", "content": "Second?"},
    ]
    second = await client.responses.create(model="m", input=follow_up)

    assert first.output_text == "Answer 1."
    assert second.output_text == "Answer 2."
    replayed = seen[1][1]
    assert isinstance(replayed, AIMessage)
    assert replayed.content[0]["text"] == "Answer 1."
    assert replayed.content[0]["phase"] == "final_answer"


def _calls_then_answer():
    return [
        AIMessage(
            content="",
            tool_calls=[
                {"id": "call_a", "name": "get_weather", "args": {"city": "Oslo"}},
                {"id": "call_b", "name": "get_time", "args": {}},
            ],
        ),
        "It is sunny at noon.",
    ]


async def test_function_calls_round_trip_through_replayed_outputs(make_client):
    seen = []
    replies = iter(_calls_then_answer())

    def respond(messages):
        seen.append(messages)
        return next(replies)

    graph = single_model_graph(ScriptedChatModel(responder=respond))
    client = make_client({"m": config(graph)})
    tools = [
        {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
        {"type": "function", "name": "get_time", "parameters": {"type": "object"}},
    ]

    first = await client.responses.create(model="m", input="Weather?", tools=tools)
    calls = [item for item in first.output if item.type == "function_call"]
    outputs = [
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": f"r-{call.name}",
        }
        for call in calls
    ]
    second = await client.responses.create(
        model="m",
        input=[
            {"role": "user", "content": "Weather?"},
            *[c.model_dump() for c in first.output],
            *outputs,
        ],
        tools=tools,
    )

    assert [(c.call_id, c.name, c.arguments, c.status) for c in calls] == [
        ("call_a", "get_weather", '{"city": "Oslo"}', "completed"),
        ("call_b", "get_time", "{}", "completed"),
    ]
    assert first.output_text == ""
    assert second.output_text == "It is sunny at noon."
    user, call_message, result_a, result_b = seen[1]
    assert isinstance(user, HumanMessage)
    assert [c["id"] for c in call_message.tool_calls] == ["call_a", "call_b"]
    assert isinstance(result_a, ToolMessage)
    assert (result_a.tool_call_id, result_a.content) == ("call_a", "r-get_weather")
    assert result_b.tool_call_id == "call_b"


async def test_stream_helper_output_with_parsed_fields_replays(make_client):
    # The SDKs' stream and parse helpers add ``parsed_arguments`` to function
    # calls and ``parsed`` to output text; a kept Response's output items
    # carry ``caller``, ``created_by`` and ``name``. All replay unchanged.
    seen = []
    replies = iter(_calls_then_answer())

    def respond(messages):
        seen.append(messages)
        return next(replies)

    graph = single_model_graph(ScriptedChatModel(responder=respond))
    client = make_client({"m": config(graph)})
    tools = [
        {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
        {"type": "function", "name": "get_time", "parameters": {"type": "object"}},
    ]
    async with client.responses.stream(model="m", input="Weather?", tools=tools) as s:
        first = await s.get_final_response()
    calls = [item.model_dump() for item in first.output]
    assert all("parsed_arguments" in call for call in calls)
    calls[0]["parsed_arguments"] = {"city": "Oslo"}
    outputs = [
        {
            "type": "function_call_output",
            "id": f"fco_{call['call_id']}",
            "call_id": call["call_id"],
            "output": "r",
            "status": "completed",
            "caller": {"type": "direct"},
            "created_by": "client",
            "name": call["name"],
        }
        for call in calls
    ]
    answer = {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "{}", "annotations": [], "parsed": {}}
        ],
    }

    second = await client.responses.create(
        model="m",
        input=[
            {"role": "user", "content": "Weather?"},
            *calls,
            *outputs,
            answer,
            {"role": "user", "content": "Again?"},
        ],
        tools=tools,
    )

    assert second.output_text == "It is sunny at noon."
    _, call_message, result_a, _, replayed_answer, _ = seen[1]
    assert call_message.tool_calls[0]["args"] == {"city": "Oslo"}
    assert (result_a.name, result_a.content) == ("get_weather", "r")
    assert replayed_answer.content[0]["text"] == "{}"
    assert "parsed" not in replayed_answer.content[0]


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


async def test_instructions_and_roles_reach_the_graph(make_client):
    seen = []
    graph = single_model_graph(
        ScriptedChatModel(responder=lambda m: seen.extend(m) or "ok")
    )
    client = make_client({"m": config(graph)})

    await client.responses.create(
        model="m",
        instructions="Be terse.",
        input=[
            {"role": "developer", "content": "No emoji."},
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Hi"}],
            },
        ],
    )

    instructions, developer, user = seen
    assert isinstance(instructions, SystemMessage)
    assert instructions.content == "Be terse."
    assert developer.additional_kwargs == {"__openai_role__": "developer"}
    assert user.content == [{"type": "text", "text": "Hi"}]


async def test_input_files_reach_file_input_graphs_as_langchain_file_blocks(
    make_client,
):
    seen = []
    graph = single_model_graph(
        ScriptedChatModel(responder=lambda m: seen.extend(m) or "ok")
    )
    client = make_client(
        {
            "files": config(graph, features={GraphFeature.FILE_INPUTS}),
            "plain": config(scripted_graph("never")),
        }
    )
    message = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Read"},
            {"type": "input_file", "file_id": "file-123"},
        ],
    }

    await client.responses.create(model="files", input=[message])
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="plain", input=[message])

    assert seen[0].content == [
        {"type": "text", "text": "Read"},
        {"type": "file", "file_id": "file-123"},
    ]
    assert caught.value.body["param"] == "input[0].content[1]"


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


async def test_graph_request_carries_tools_choice_metadata_and_user(make_client):
    captured = []

    def to_input(request, messages):
        captured.append(request)
        return {"messages": messages}

    client = make_client({"m": config(scripted_graph("ok"), request_to_input=to_input)})
    await client.responses.create(
        model="m",
        input="Hi",
        tools=[
            {
                "type": "function",
                "name": "lookup",
                "description": "Look it up.",
                "parameters": {"type": "object", "properties": {}},
                "strict": True,
            }
        ],
        tool_choice={"type": "function", "name": "lookup"},
        parallel_tool_calls=False,
        metadata={"conversation_id": "c-9"},
        user="u-1",
    )

    (request,) = captured
    assert request.tools == (
        ClientFunctionTool(
            name="lookup",
            description="Look it up.",
            parameters={"type": "object", "properties": {}},
            strict=True,
        ),
    )
    assert request.tool_choice == NamedFunctionToolChoice("lookup")
    assert request.parallel_tool_calls is False
    assert dict(request.metadata) == {"conversation_id": "c-9"}
    assert request.user == "u-1"


async def test_replayed_refusals_and_citations_reach_the_graph(make_client):
    seen = []
    graph = single_model_graph(
        ScriptedChatModel(responder=lambda m: seen.extend(m) or "ok")
    )
    client = make_client({"m": config(graph)})

    await client.responses.create(
        model="m",
        input=[
            {"role": "user", "content": "Cite something."},
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_prev",
                "status": "completed",
                "phase": "final_answer",
                "content": [
                    {
                        "type": "output_text",
                        "text": "See docs.",
                        "annotations": [
                            {
                                "type": "url_citation",
                                "url": "https://docs.example",
                                "title": "Docs",
                                "start_index": 4,
                                "end_index": 7,
                            }
                        ],
                    },
                    {"type": "refusal", "refusal": "Not the rest."},
                ],
            },
            {"role": "user", "content": "Thanks."},
        ],
    )

    assistant = seen[1]
    text, refusal = assistant.content
    assert text["annotations"] == [
        {
            "type": "citation",
            "url": "https://docs.example",
            "title": "Docs",
            "start_index": 4,
            "end_index": 7,
            "cited_text": "docs",
        }
    ]
    assert (text["id"], text["phase"]) == ("msg_prev", "final_answer")
    assert refusal == {
        "type": "refusal",
        "refusal": "Not the rest.",
        "id": "msg_prev",
        "phase": "final_answer",
    }
