"""Chat Completions through the official ``openai`` SDK, in-process."""

from __future__ import annotations

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.content import create_citation, create_text_block
from langgraph_openai_serve import (
    ClientFunctionTool,
    GraphFeature,
    GraphRequest,
    NamedFunctionToolChoice,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from support import config, scripted_graph, single_model_graph

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Hello"}]


async def test_completion_returns_the_final_message_with_usage(make_client):
    client = make_client({"m": config(scripted_graph("Hi there, friend."))})

    completion = await client.chat.completions.create(model="m", messages=USER)

    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "Hi there, friend."
    assert choice.finish_reason == "stop"
    assert completion.model == "m"
    assert completion.id.startswith("chatcmpl-")
    assert completion.usage is not None
    assert completion.usage.completion_tokens == 3
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )


async def test_stream_deltas_concatenate_to_the_answer(make_client):
    client = make_client({"m": config(scripted_graph("one two three four"))})

    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    chunks = [chunk async for chunk in stream]

    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    assert "".join(d for d in deltas if d) == "one two three four"
    assert len([d for d in deltas if d]) == 4
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)
    assert len({c.id for c in chunks}) == 1


async def test_stream_with_include_usage_ends_with_empty_choices_usage_chunk(
    make_client,
):
    client = make_client({"m": config(scripted_graph("a b c"))})

    stream = await client.chat.completions.create(
        model="m",
        messages=USER,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]

    assert chunks[-1].choices == []
    assert chunks[-1].usage.completion_tokens == 3
    assert chunks[-2].choices[0].finish_reason == "stop"


async def test_usage_is_omitted_when_the_model_reports_none(make_client):
    client = make_client(
        {"m": config(scripted_graph("quiet", "quiet", report_usage=False))}
    )

    completion = await client.chat.completions.create(model="m", messages=USER)
    stream = await client.chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]

    assert completion.usage is None
    assert all(chunk.usage is None for chunk in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def _tool_call_reply() -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}},
            {"id": "call_2", "name": "get_time", "args": {"zone": "CET"}},
        ],
    )


async def test_tool_calls_finish_with_tool_calls(make_client):
    client = make_client({"m": config(scripted_graph(_tool_call_reply()))})

    completion = await client.chat.completions.create(model="m", messages=USER)

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = [
        (c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls
    ]
    assert calls == [
        ("call_1", "get_weather", '{"city": "Paris"}'),
        ("call_2", "get_time", '{"zone": "CET"}'),
    ]


async def test_streamed_tool_calls_arrive_complete_in_one_delta(make_client):
    client = make_client({"m": config(scripted_graph(_tool_call_reply()))})

    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    chunks = [chunk async for chunk in stream]

    with_calls = [c for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    assert len(with_calls) == 1
    calls = with_calls[0].choices[0].delta.tool_calls
    assert [(c.index, c.id, c.function.name) for c in calls] == [
        (0, "call_1", "get_weather"),
        (1, "call_2", "get_time"),
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


async def test_replayed_tool_exchange_reaches_the_graph_as_langchain_messages(
    make_client,
):
    seen = []

    def respond(messages):
        seen.extend(messages)
        return "It is sunny."

    graph = single_model_graph(ScriptedChatModel(responder=respond))
    client = make_client({"m": config(graph)})
    first = await client.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "No emoji."}]},
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"c": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_9", "content": "sunny"},
        ],
    )

    assert first.choices[0].message.content == "It is sunny."
    system, developer, user, assistant, tool = seen
    assert isinstance(system, SystemMessage)
    assert system.content == "Be brief."
    assert developer.additional_kwargs == {"__openai_role__": "developer"}
    assert isinstance(user, HumanMessage)
    assert assistant.tool_calls[0]["args"] == {"c": 1}
    assert assistant.tool_calls[0]["id"] == "call_9"
    assert isinstance(tool, ToolMessage)
    assert (tool.tool_call_id, tool.content) == ("call_9", "sunny")


async def test_named_tool_messages_and_parse_helper_fields_replay(make_client):
    # LangChain.js sends a tool's name on its ToolMessage; the SDKs' parse
    # helpers add ``parsed`` and ``parsed_arguments`` to what they hand back.
    seen = []

    def respond(messages):
        seen.extend(messages)
        return "It is sunny."

    client = make_client(
        {"m": config(single_model_graph(ScriptedChatModel(responder=respond)))}
    )
    await client.chat.completions.create(
        model="m",
        messages=[
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "parsed": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"c": 1}',
                            "parsed_arguments": {"c": 1},
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "name": "get_weather",
                "tool_call_id": "call_9",
                "content": "sunny",
            },
        ],
    )

    _, assistant, tool = seen
    assert assistant.tool_calls[0]["args"] == {"c": 1}
    assert isinstance(tool, ToolMessage)
    assert (tool.name, tool.tool_call_id, tool.content) == (
        "get_weather",
        "call_9",
        "sunny",
    )


async def test_sdk_message_objects_replay_unchanged(make_client):
    client = make_client({"m": config(scripted_graph("first", "second"))})

    first = await client.chat.completions.create(model="m", messages=USER)
    replay = first.choices[0].message.model_dump()
    second = await client.chat.completions.create(
        model="m", messages=[*USER, replay, {"role": "user", "content": "again"}]
    )

    assert second.choices[0].message.content == "second"


FILE_MESSAGE = {
    "role": "user",
    "content": [
        {"type": "text", "text": "Summarize"},
        {"type": "file", "file": {"file_id": "file-abc"}},
    ],
}


async def test_file_parts_become_langchain_file_blocks(make_client):
    seen = []
    graph = single_model_graph(
        ScriptedChatModel(responder=lambda messages: seen.extend(messages) or "ok")
    )
    client = make_client({"m": config(graph, features={GraphFeature.FILE_INPUTS})})

    await client.chat.completions.create(model="m", messages=[FILE_MESSAGE])

    assert seen[0].content == [
        {"type": "text", "text": "Summarize"},
        {"type": "file", "file_id": "file-abc"},
    ]


async def test_file_parts_are_rejected_by_graphs_without_file_inputs(make_client):
    client = make_client({"m": config(scripted_graph("never"))})

    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="m", messages=[FILE_MESSAGE])

    assert caught.value.body["param"] == "messages[0].content[1]"


async def test_graph_request_carries_tools_choice_metadata_and_user(make_client):
    captured: list[GraphRequest] = []

    def to_input(request, messages):
        captured.append(request)
        return {"messages": messages}

    client = make_client({"m": config(scripted_graph("ok"), request_to_input=to_input)})
    await client.chat.completions.create(
        model="m",
        messages=USER,
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Look up a word.",
                    "parameters": {"type": "object", "properties": {}},
                    "strict": True,
                },
            }
        ],
        tool_choice={"type": "function", "function": {"name": "lookup"}},
        parallel_tool_calls=False,
        metadata={"conversation_id": "c-1"},
        user="user-7",
    )

    (request,) = captured
    assert request.model == "m"
    assert request.tools == (
        ClientFunctionTool(
            name="lookup",
            description="Look up a word.",
            parameters={"type": "object", "properties": {}},
            strict=True,
        ),
    )
    assert request.tool_choice == NamedFunctionToolChoice("lookup")
    assert request.parallel_tool_calls is False
    assert dict(request.metadata) == {"conversation_id": "c-1"}
    assert request.user == "user-7"
    assert request.server_tools == ()


async def test_refusal_is_returned_apart_from_content(make_client):
    refusal = AIMessage(content="", additional_kwargs={"refusal": "I can't help."})
    client = make_client({"m": config(scripted_graph(refusal, refusal))})

    completion = await client.chat.completions.create(model="m", messages=USER)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    chunks = [chunk async for chunk in stream]

    assert completion.choices[0].message.refusal == "I can't help."
    assert completion.choices[0].message.content is None
    refusals = [c.choices[0].delta.refusal for c in chunks if c.choices]
    assert "I can't help." in refusals


@pytest.mark.parametrize("reason", ["length", "content_filter"])
async def test_truncated_answers_report_their_finish_reason(make_client, reason):
    reply = AIMessage(content="partial", response_metadata={"finish_reason": reason})
    client = make_client({"m": config(scripted_graph(reply, reply))})

    completion = await client.chat.completions.create(model="m", messages=USER)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    chunks = [chunk async for chunk in stream]

    assert completion.choices[0].finish_reason == reason
    assert chunks[-1].choices[0].finish_reason == reason


def _cited_reply() -> AIMessage:
    return AIMessage(
        content=[
            create_text_block(text="Intro. "),
            create_text_block(
                text="Read the source [1].",
                annotations=[
                    create_citation(
                        url="https://example.com/source",
                        title="Example source",
                        start_index=9,
                        end_index=14,
                        cited_text="source",
                    )
                ],
            ),
        ]
    )


async def test_citations_become_url_annotations_offset_into_the_text(make_client):
    client = make_client({"m": config(scripted_graph(_cited_reply(), _cited_reply()))})

    completion = await client.chat.completions.create(model="m", messages=USER)
    stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
    chunks = [chunk async for chunk in stream]

    message = completion.choices[0].message
    assert message.content == "Intro. Read the source [1]."
    (annotation,) = message.annotations
    citation = annotation.url_citation
    assert (citation.url, citation.title) == (
        "https://example.com/source",
        "Example source",
    )
    assert message.content[citation.start_index : citation.end_index + 1] == "source"
    final_delta = chunks[-1].choices[0].delta
    assert final_delta.model_extra["annotations"] == [annotation.model_dump()]
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == message.content
