"""The reference's Chat builders and request side
(``langgraph_openai_serve.chat_completions``), checked by parsing what they
build with the SDK's types."""

from __future__ import annotations

import json

import langgraph_openai_serve
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langgraph_openai_serve import (
    ClientFunctionTool,
    GraphRequest,
    InvalidRequestError,
    NamedFunctionToolChoice,
    citation_slice,
)
from langgraph_openai_serve.chat_completions import (
    ChatCompletionRequest,
    ChatCompletionStreamResponseBuilder,
    annotations_from_message,
    chat_completion_response,
    convert_to_lc_messages,
    decode_chat_request,
    response_message,
    tool_calls_from_message,
    usage_info,
)
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
)
from pydantic import ValidationError
from reference_app import cited_message
from support import chat_sse_payloads

USER = [{"role": "user", "content": "Hello"}]


# --- Chat builders and helpers ----------------------------------------------


def _tool_call_message() -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"id": "call_1", "name": "lookup", "args": {"q": "weather"}},
            {"id": "call_2", "name": "lookup", "args": {"q": "time"}},
        ],
    )


USAGE: UsageMetadata = {
    "input_tokens": 7,
    "output_tokens": 5,
    "total_tokens": 12,
    "input_token_details": {"cache_read": 2},
}


def test_stream_builder_frames_are_chunks_the_sdk_parses():
    builder = ChatCompletionStreamResponseBuilder("m", include_usage=True)
    cited = cited_message()

    payloads = chat_sse_payloads(
        builder.role(),
        builder.text("Read the "),
        builder.text('"source"\n[1].'),
        builder.tool_calls(_tool_call_message()),
        builder.finish("tool_calls", annotations=annotations_from_message(cited)),
        builder.usage(USAGE),
        builder.done(),
    )

    assert payloads[-1] == "[DONE]"
    chunks = [ChatCompletionChunk.model_validate_json(p) for p in payloads[:-1]]
    assert {(c.id, c.created, c.model) for c in chunks} == {
        (builder.response_id, builder.created, "m")
    }
    assert builder.response_id.startswith("chatcmpl-")
    assert builder.include_usage
    role, first, second, calls, final, usage = chunks
    assert role.choices[0].delta.role == "assistant"
    assert first.choices[0].delta.content + second.choices[0].delta.content == (
        'Read the "source"\n[1].'
    )
    assert [
        (c.index, c.id, c.function.name, json.loads(c.function.arguments))
        for c in calls.choices[0].delta.tool_calls
    ] == [
        (0, "call_1", "lookup", {"q": "weather"}),
        (1, "call_2", "lookup", {"q": "time"}),
    ]
    assert final.choices[0].finish_reason == "tool_calls"
    (annotation,) = json.loads(payloads[4])["choices"][0]["delta"]["annotations"]
    assert annotation["url_citation"]["url"] == "https://example.com/source"
    assert usage.choices == []
    assert (usage.usage.prompt_tokens, usage.usage.completion_tokens) == (7, 5)
    assert usage.usage.total_tokens == 12


def test_stream_builder_error_then_done_end_a_stream_the_sdk_raises_on():
    builder = ChatCompletionStreamResponseBuilder("m")

    payloads = chat_sse_payloads(
        builder.role(), builder.error("It broke."), builder.done()
    )

    assert not builder.include_usage
    error = json.loads(payloads[1])["error"]
    assert (error["message"], error["type"], error["code"]) == (
        "It broke.",
        "server_error",
        "server_error",
    )
    assert payloads[2] == "[DONE]"
    assert ChatCompletionStreamResponseBuilder.done() == "data: [DONE]\n\n"


def test_chat_completion_response_is_the_sdk_chat_completion():
    message = cited_message().model_copy(update={"usage_metadata": USAGE})

    completion = chat_completion_response(model="m", message=message)
    plain = chat_completion_response(model="m", message=AIMessage(content="Hi."))

    assert isinstance(completion, ChatCompletion)
    again = ChatCompletion.model_validate_json(completion.model_dump_json())
    (choice,) = again.choices
    assert again.id.startswith("chatcmpl-")
    assert (again.object, again.model) == ("chat.completion", "m")
    assert (choice.finish_reason, choice.message.content) == (
        "stop",
        "Read the source [1].",
    )
    assert choice.message.annotations[0].url_citation.title == "Example source"
    assert (again.usage.prompt_tokens, again.usage.total_tokens) == (7, 12)
    assert again.usage.prompt_tokens_details.cached_tokens == 2
    assert plain.usage is None
    assert plain.choices[0].message.content == "Hi."


def test_response_message_and_tool_calls_from_message():
    message, reason = response_message(_tool_call_message())
    text, text_reason = response_message(AIMessage(content="Done."))
    calls = tool_calls_from_message(_tool_call_message())

    assert isinstance(message, ChatCompletionMessage)
    assert (message.role, message.content, reason) == ("assistant", None, "tool_calls")
    assert [call.id for call in message.tool_calls] == ["call_1", "call_2"]
    assert (text.content, text.tool_calls, text_reason) == ("Done.", None, "stop")
    assert all(isinstance(c, ChatCompletionMessageFunctionToolCall) for c in calls)
    assert [
        (c.type, c.function.name, json.loads(c.function.arguments)) for c in calls
    ] == [
        ("function", "lookup", {"q": "weather"}),
        ("function", "lookup", {"q": "time"}),
    ]
    assert tool_calls_from_message(AIMessage(content="no calls")) == []
    nameless = AIMessage(
        content="", tool_calls=[{"id": None, "name": "lookup", "args": {}}]
    )
    with pytest.raises(langgraph_openai_serve.GraphError, match="no id"):
        tool_calls_from_message(nameless)


def test_usage_info_and_annotations_from_message():
    usage = usage_info(USAGE)
    (annotation,) = annotations_from_message(cited_message())
    text = cited_message().text

    assert usage_info(None) is None
    assert isinstance(usage, CompletionUsage)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (
        7,
        5,
        12,
    )
    assert annotation.type == "url_citation"
    span = annotation.url_citation
    assert (span.url, span.title) == ("https://example.com/source", "Example source")
    assert text[citation_slice(span.start_index, span.end_index, text)] == "source"
    assert annotations_from_message(AIMessage(content="plain")) == []


# --- Chat request side -------------------------------------------------------

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Read this"},
            {"type": "file", "file": {"file_id": "file-1"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"q": "x"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "found"},
]


def test_decode_chat_request_normalizes_the_request_for_graphs():
    request = ChatCompletionRequest.model_validate(
        {
            "model": "m",
            "messages": CONVERSATION,
            "metadata": {"k": "v"},
            "user": "user-1",
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "lookup",
                        "description": "Looks up.",
                        "parameters": {"type": "object"},
                        "strict": True,
                    },
                }
            ],
            "tool_choice": {"type": "function", "function": {"name": "lookup"}},
            "parallel_tool_calls": False,
        }
    )

    graph_request, messages = decode_chat_request(request)

    assert graph_request == GraphRequest(
        model="m",
        metadata={"k": "v"},
        user="user-1",
        tools=(ClientFunctionTool("lookup", "Looks up.", {"type": "object"}, True),),
        tool_choice=NamedFunctionToolChoice("lookup"),
        parallel_tool_calls=False,
    )
    assert [type(m) for m in messages] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
    ]
    assert messages[1].content[1] == {"type": "file", "file_id": "file-1"}
    assert messages[2].tool_calls[0]["args"] == {"q": "x"}
    assert (messages[3].tool_call_id, messages[3].content) == ("call_1", "found")
    assert convert_to_lc_messages(request.messages) == messages
    assert convert_to_lc_messages(CONVERSATION) == messages


def test_convert_to_lc_messages_rejects_a_tool_result_without_its_call():
    with pytest.raises(InvalidRequestError) as caught:
        convert_to_lc_messages([{"role": "tool", "tool_call_id": "x", "content": "?"}])

    assert caught.value.param == "messages[0].tool_call_id"


def test_validate_stream_options_allows_them_only_when_streaming(sdk):
    streaming = ChatCompletionRequest(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    with pytest.raises(ValidationError, match="only allowed when 'stream' is true"):
        ChatCompletionRequest(
            model="m", messages=USER, stream_options={"include_usage": True}
        )
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(
            model="cited", messages=USER, stream_options={"include_usage": True}
        )

    assert streaming.stream_options.include_usage
    assert caught.value.body["param"] == "stream_options"
