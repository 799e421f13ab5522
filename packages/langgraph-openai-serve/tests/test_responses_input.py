"""What a Responses request hands the graph, through the official ``openai``
SDK, in-process: instructions and roles, input files (for graphs that take
them), the tools, tool choice, metadata and user of the request, and earlier
output replayed as input (a follow-up, function calls and their outputs, the
SDK helpers' parsed fields, refusals and citations)."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph_openai_serve import (
    ClientFunctionTool,
    GraphFeature,
    NamedFunctionToolChoice,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from support import config, scripted_graph, single_model_graph

pytestmark = pytest.mark.anyio


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


_WEATHER_TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
    {"type": "function", "name": "get_time", "parameters": {"type": "object"}},
]


def _calls_then_answer_client(make_client):
    """A client of model ``m``, which calls both tools, then answers; and
    the messages the model saw at each call."""
    seen: list[list] = []
    replies = iter(_calls_then_answer())

    def respond(messages):
        seen.append(messages)
        return next(replies)

    graph = single_model_graph(ScriptedChatModel(responder=respond))
    return make_client({"m": config(graph)}), seen


async def test_function_calls_round_trip_through_replayed_outputs(make_client):
    client, seen = _calls_then_answer_client(make_client)
    tools = _WEATHER_TOOLS

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
    client, seen = _calls_then_answer_client(make_client)
    tools = _WEATHER_TOOLS
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
