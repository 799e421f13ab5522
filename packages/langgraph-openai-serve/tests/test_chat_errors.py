"""Every rejected Chat request answers with the OpenAI envelope and ``param``."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager

import openai
import pytest
from langchain_core.exceptions import ContextOverflowError
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import GraphFeature, InvalidRequestError
from langgraph_openai_serve.testing import ScriptedChatModel
from support import config, scripted_graph, single_model_graph

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Hello"}]


async def _post(client, body):
    return await client.post("/chat/completions", body=body, cast_to=object)


async def _rejected(client, body, status=400):
    with pytest.raises(openai.APIStatusError) as caught:
        await _post(client, body)
    assert caught.value.status_code == status
    return caught.value.body


@pytest.fixture
def client(make_client):
    return make_client({"m": config(scripted_graph("ok", "ok"))})


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"temperature": 0.2}, "temperature"),
        ({"max_tokens": 10}, "max_tokens"),
        ({"n": 2}, "n"),
        ({"top_p": 0.5}, "top_p"),
        ({"response_format": {"type": "json_object"}}, "response_format.type"),
        (
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "x", "schema": {"type": "object"}},
                }
            },
            "response_format",
        ),
        ({"seed": 1}, "seed"),
        ({"stop": "END"}, "stop"),
        ({"presence_penalty": 0.5}, "presence_penalty"),
        ({"functions": [{"name": "f"}]}, "functions"),
        ({"function_call": "auto"}, "function_call"),
        ({"prompt_cache_key": "k"}, "prompt_cache_key"),
    ],
)
async def test_unsupported_top_level_fields_are_rejected_by_name(client, extra, param):
    error = await _rejected(client, {"model": "m", "messages": USER, **extra})

    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert param in error["message"]


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"role": "function", "name": "f", "content": "x"}, "messages[0].role"),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "https://x"}}],
            },
            "messages[0].content[0].type",
        ),
        (
            {
                "role": "user",
                "content": [
                    {
                        "type": "input_audio",
                        "input_audio": {"data": "", "format": "wav"},
                    }
                ],
            },
            "messages[0].content[0].type",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "file", "file": {"file_data": "aGk="}}],
            },
            "messages[0].content[0].file.file_data",
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "file", "file": {"file_id": "f-1", "filename": "a.txt"}}
                ],
            },
            "messages[0].content[0].file.filename",
        ),
        (
            {"role": "assistant", "content": "x", "function_call": {"name": "f"}},
            "messages[0].function_call",
        ),
        ({"role": "user"}, "messages[0].content"),
    ],
)
async def test_unsupported_message_shapes_name_the_offending_param(
    client, message, param
):
    error = await _rejected(client, {"model": "m", "messages": [message]})

    assert error["param"] == param
    assert error["type"] == "invalid_request_error"


async def test_malformed_json_is_400(client):
    response = await client._client.post(
        "/v1/chat/completions",
        content=b'{"model": "m", "messages": [',
        headers={"content-type": "application/json"},
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "JSON" in error["message"]


async def test_missing_model_is_named(client):
    error = await _rejected(client, {"messages": USER})

    assert error["param"] == "model"
    assert error["message"] == "Missing required parameter: 'model'."


async def test_unknown_model_is_404_model_not_found(client):
    with pytest.raises(openai.NotFoundError) as caught:
        await client.chat.completions.create(model="nope", messages=USER)

    assert caught.value.body["code"] == "model_not_found"
    assert caught.value.body["param"] == "model"


async def test_stream_options_without_stream_is_rejected(client):
    error = await _rejected(
        client,
        {"model": "m", "messages": USER, "stream_options": {"include_usage": True}},
    )

    assert error["param"] == "stream_options"


async def test_tool_result_without_a_matching_call_is_rejected(client):
    error = await _rejected(
        client,
        {
            "model": "m",
            "messages": [*USER, {"role": "tool", "tool_call_id": "x", "content": "r"}],
        },
    )

    assert error["param"] == "messages[1].tool_call_id"


async def test_tool_call_arguments_must_be_a_json_object(client):
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "[1"}}
    error = await _rejected(
        client,
        {"model": "m", "messages": [{"role": "assistant", "tool_calls": [call]}]},
    )

    assert error["param"] == "messages[0].tool_calls[0].function.arguments"


@pytest.mark.parametrize(
    ("metadata", "fragment"),
    [
        ({f"k{i}": "v" for i in range(17)}, "16"),
        ({"k" * 65: "v"}, "64"),
        ({"k": "v" * 513}, "512"),
        ({"lgos_secret": "v"}, "reserved"),
    ],
)
async def test_metadata_outside_openai_limits_is_rejected(client, metadata, fragment):
    error = await _rejected(
        client, {"model": "m", "messages": USER, "metadata": metadata}
    )

    assert error["param"] == "metadata"
    assert fragment in error["message"]


class _Coordinator:
    @asynccontextmanager
    async def lease(self, key):
        yield


async def test_interrupt_enabled_model_is_rejected_on_chat(make_client):
    graph = single_model_graph(ScriptedChatModel(replies=["x"]))
    graph.checkpointer = InMemorySaver()
    client = make_client(
        {
            "hitl": config(
                graph,
                features={GraphFeature.INTERRUPTS},
                run_coordinator=_Coordinator(),
            )
        }
    )

    error = await _rejected(client, {"model": "hitl", "messages": USER})

    assert error["param"] == "model"
    assert "/v1/responses" in error["message"]


async def test_context_overflow_is_400_context_length_exceeded(make_client):
    overflow = ContextOverflowError("This model's maximum context length is 8 tokens.")
    client = make_client({"m": config(scripted_graph(overflow))})

    error = await _rejected(client, {"model": "m", "messages": USER})

    assert error["code"] == "context_length_exceeded"
    assert error["type"] == "invalid_request_error"


async def test_unexpected_failure_is_500_without_details(make_client, caplog):
    client = make_client(
        {"m": config(scripted_graph(RuntimeError("db password=hunter2")))}
    )

    with caplog.at_level(logging.ERROR, logger="langgraph_openai_serve"):
        error = await _rejected(client, {"model": "m", "messages": USER}, status=500)

    assert error == {
        "message": "Internal server error",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert "hunter2" in caplog.text


async def test_adapter_invalid_request_error_keeps_its_status_param_and_code(
    make_client,
):
    def reject(request, settings):
        raise InvalidRequestError(
            "Tenant is suspended.",
            param="user",
            code="tenant_suspended",
            status_code=403,
        )

    client = make_client({"m": config(scripted_graph("x"), context_factory=reject)})

    error = await _rejected(client, {"model": "m", "messages": USER}, status=403)

    assert error == {
        "message": "Tenant is suspended.",
        "type": "invalid_request_error",
        "param": "user",
        "code": "tenant_suspended",
    }


async def test_unknown_route_and_wrong_method_use_the_envelope(client):
    missing = await client._client.get("/v1/nothing-here")
    wrong_method = await client._client.get("/v1/chat/completions")

    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "invalid_request_error"
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["message"] == "Method not allowed."
