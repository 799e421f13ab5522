"""Rejected Responses requests, and replay validation, name their ``param``."""

from __future__ import annotations

import openai
import pytest
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


@pytest.fixture
def client(make_client):
    return make_client({"m": config(scripted_graph(responder=lambda _: "ok"))})


async def _rejected(client, body, status=400):
    with pytest.raises(openai.APIStatusError) as caught:
        await client.post("/responses", body={"model": "m", **body}, cast_to=object)
    assert caught.value.status_code == status
    assert caught.value.body["type"] == "invalid_request_error"
    return caught.value.body


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"store": True}, "store"),
        ({"conversation": "conv_1"}, "conversation"),
        ({"include": ["reasoning.encrypted_content"]}, "include"),
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
        (
            {"tools": [{"type": "file_search", "vector_store_ids": []}]},
            "tools[0].type",
        ),
        ({"text": {"format": {"type": "json_object"}}}, "text.format.type"),
        (
            {"text": {"format": {"type": "json_schema", "name": "x", "schema": {}}}},
            "text.format.type",
        ),
        ({"temperature": 0.1}, "temperature"),
        ({"top_p": 0.9}, "top_p"),
        ({"max_output_tokens": 10}, "max_output_tokens"),
        ({"reasoning": {"effort": "low"}}, "reasoning.effort"),
        ({"stream_options": {"include_obfuscation": False}}, "stream_options"),
        ({"service_tier": "flex"}, "service_tier"),
        ({"prompt": {"id": "pmpt_1"}}, "prompt"),
        ({"prompt_cache_key": "k"}, "prompt_cache_key"),
        ({"truncation": "auto"}, "truncation"),
        ({"something_new": 1}, "something_new"),
        ({"background": True}, "background"),
        ({"previous_response_id": "resp_1"}, "previous_response_id"),
        ({"metadata": {"lgos_private": "x"}}, "metadata"),
        ({"tool_choice": {"type": "web_search"}}, "tool_choice.type"),
    ],
)
async def test_unsupported_fields_are_rejected_by_name(client, extra, param):
    error = await _rejected(client, {"input": "Hi", **extra})

    assert error["param"] == param


@pytest.mark.parametrize(
    ("item", "param"),
    [
        (
            {
                "role": "user",
                "content": [{"type": "input_image", "image_url": "https://x"}],
            },
            "input[0].content[0].type",
        ),
        (
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]},
            "input[0].content[0].type",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "input_file", "file_url": "https://x"}],
            },
            "input[0].content[0].file_url",
        ),
        (
            {"role": "user", "content": [{"type": "input_file", "file_data": "aGk="}]},
            "input[0].content[0].file_data",
        ),
        ({"type": "item_reference", "id": "msg_1"}, "input[0]"),
        (
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [],
                "encrypted_content": "x",
            },
            "input[0].encrypted_content",
        ),
        (
            {
                "type": "function_call_output",
                "call_id": "c",
                "output": [{"type": "input_text", "text": "x"}],
            },
            "input[0].output",
        ),
        (
            {
                "type": "function_call",
                "call_id": "c",
                "name": "f",
                "arguments": "{}",
                "caller": {"type": "program", "caller_id": "p"},
            },
            "input[0].caller.type",
        ),
        (
            {
                "type": "function_call",
                "call_id": "c",
                "name": "f",
                "arguments": "{}",
                "namespace": "ns",
            },
            "input[0].namespace",
        ),
        (
            {"role": "user", "content": [{"type": "output_text", "text": "x"}]},
            "input[0].content[0].type",
        ),
        ({"role": "tool", "content": "x"}, "input[0].role"),
    ],
)
async def test_unsupported_input_items_name_the_offending_param(client, item, param):
    error = await _rejected(client, {"input": [item]})

    assert error["param"] == param


def _call(call_id="call_1"):
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def _output(call_id="call_1"):
    return {"type": "function_call_output", "call_id": call_id, "output": "r"}


@pytest.mark.parametrize(
    ("items", "param"),
    [
        ([_call()], "input[0]"),
        ([_call(), _output(), _output()], "input[2].call_id"),
        ([_output()], "input[0].call_id"),
        ([_call(), _output("call_other")], "input[1].call_id"),
        ([_call(), _call(), _output()], "input[1].call_id"),
        ([{**_call(), "arguments": "[1, 2]"}, _output()], "input[0].arguments"),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
async def test_inconsistent_replays_fail_before_the_graph_runs(
    make_client, items, param, stream
):
    ran = []
    client = make_client(
        {"m": config(scripted_graph(responder=lambda _: ran.append(1) or "x"))}
    )

    error = await _rejected(client, {"input": items, "stream": stream})

    assert error["param"] == param
    assert ran == []


async def test_agents_sdk_defaults_are_accepted(client):
    response = await client.post(
        "/responses",
        body={
            "model": "m",
            "input": [{"role": "user", "content": "Hi"}],
            "include": [],
            "store": False,
            "tools": [],
        },
        cast_to=object,
    )

    assert response["status"] == "completed"


async def test_replayed_stream_helper_items_with_null_fields_are_accepted(client):
    items = [
        {"role": "user", "content": "Hi"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "phase": "final_answer",
            "content": [
                {
                    "type": "output_text",
                    "text": "Hello",
                    "annotations": [],
                    "logprobs": None,
                    "parsed": None,
                }
            ],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_1",
            "name": "f",
            "arguments": "{}",
            "status": "completed",
            "caller": None,
            "namespace": None,
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "done"},
    ]

    response = await client.post(
        "/responses", body={"model": "m", "input": items}, cast_to=object
    )

    assert response["status"] == "completed"


async def test_unknown_model_is_404(client):
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(model="nope", input="Hi")

    assert caught.value.body["code"] == "model_not_found"
