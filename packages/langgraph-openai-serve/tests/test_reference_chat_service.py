"""The reference's Chat service and dependencies
(``langgraph_openai_serve.chat_completions``): a host route written as the
reference's own route is, on a real uvicorn process (``reference_app.py``),
through the official ``openai`` SDK."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncGenerator

import anyio
import httpx
import langgraph_openai_serve
import openai
import pytest
from conftest import LiveServer
from fastapi import FastAPI, Request
from interrupt_graphs import refund_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    InvalidRequestError,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.chat_completions import (
    ChatCompletionRequest,
    checkpoint_scope_dependency,
    create_chat_completion,
    decode_chat_request,
    generate_completion,
    prepare_run,
    stream_completion,
    stream_owner_dependency,
)
from openai import OpenAI
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
)
from support import chat_sse_payloads, hello_registry

USER = [{"role": "user", "content": "Hello"}]


# --- Chat service and dependencies ------------------------------------------


def _chat_request(**fields: object) -> ChatCompletionRequest:
    return ChatCompletionRequest.model_validate(
        {"model": "m", "messages": USER, **fields}
    )


@pytest.mark.anyio
async def test_prepare_run_then_generate_completion():
    request = _chat_request()
    graph_request, messages = decode_chat_request(request)

    run = await prepare_run(graph_request, messages, hello_registry())
    completion = await generate_completion(request, run)

    assert isinstance(completion, ChatCompletion)
    assert completion.choices[0].message.content == "Hi."
    assert completion.usage.total_tokens > 0


@pytest.mark.anyio
async def test_prepare_run_then_stream_completion_yields_sse_text():
    request = _chat_request(stream=True, stream_options={"include_usage": True})
    graph_request, messages = decode_chat_request(request)
    run = await prepare_run(graph_request, messages, hello_registry())

    text = "".join([frame async for frame in stream_completion(request, run)])

    payloads = chat_sse_payloads(text)
    assert payloads[-1] == "[DONE]"
    chunks = [ChatCompletionChunk.model_validate_json(p) for p in payloads[:-1]]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Hi."
    )
    assert chunks[-1].usage is not None


@pytest.mark.anyio
async def test_create_chat_completion_refuses_interrupt_graphs():
    registry = GraphRegistry(
        registry={
            "m": GraphConfig(
                graph=refund_graph(InMemorySaver(), Counter()),
                description="d",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=InMemoryRunCoordinator(),
            )
        }
    )
    dependency = stream_owner_dependency()
    owner = await anext(dependency)

    with pytest.raises(InvalidRequestError) as caught:
        await create_chat_completion(_chat_request(), registry, owner)
    await dependency.aclose()

    assert caught.value.param == "model"


# The host app of ``reference_app`` mounts ``create_chat_completion`` itself.


@pytest.fixture
def host_sdk(reference_server: LiveServer) -> OpenAI:
    base_url = reference_server.base_url.replace("/v1", "/host/v1")
    return OpenAI(base_url=base_url, api_key="unused", max_retries=0)


def test_mounted_create_chat_completion_generates_a_completion(host_sdk):
    completion = host_sdk.chat.completions.create(model="cited", messages=USER)

    (choice,) = completion.choices
    assert (choice.message.content, choice.finish_reason) == (
        "Read the source [1].",
        "stop",
    )
    assert choice.message.annotations[0].url_citation.url == (
        "https://example.com/source"
    )


def test_mounted_create_chat_completion_streams(host_sdk):
    stream = host_sdk.chat.completions.create(
        model="scripted",
        messages=USER,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the host route."
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage.total_tokens > 0


def test_mounted_create_chat_completion_stream_failure_ends_with_error_then_done(
    reference_server, host_sdk
):
    body = {"model": "failing", "messages": USER, "stream": True}
    url = reference_server.base_url.replace("/v1", "/host/v1") + "/chat/completions"
    with httpx.stream("POST", url, json=body) as raw:
        lines = [line for line in raw.iter_lines() if line]
    stream = host_sdk.chat.completions.create(
        model="failing", messages=USER, stream=True
    )

    assert lines[-1] == "data: [DONE]"
    error = json.loads(lines[-2].removeprefix("data: "))["error"]
    assert (error["type"], error["code"]) == ("server_error", "server_error")
    assert "secret detail" not in "\n".join(lines)
    with pytest.raises(openai.APIError, match="Internal server error"):
        for _ in stream:
            pass


def test_checkpoint_scope_dependency_resolves_the_servers_resolver(reference_server):
    url = reference_server.base_url.replace("/v1", "/host/scope")

    tenant = httpx.get(url, headers={"x-tenant": "acme"})
    default = httpx.get(url)

    assert tenant.json() == {"scope": "acme"}
    assert default.json() == {"scope": "default"}


@pytest.mark.anyio
async def test_checkpoint_scope_dependency_refuses_an_empty_scope():
    app = FastAPI()
    LanggraphOpenaiServe(hello_registry(), app, checkpoint_scope=lambda _request: "")
    request = Request({"type": "http", "app": app, "headers": []})

    with pytest.raises(langgraph_openai_serve.GraphConfigurationError):
        await checkpoint_scope_dependency(request)


@pytest.mark.anyio
async def test_stream_owner_dependency_closes_a_body_the_client_abandoned():
    closed = anyio.Event()

    async def body() -> AsyncGenerator[str, None]:
        try:
            yield "data: first\n\n"
            yield "data: never read\n\n"
        finally:
            closed.set()

    dependency = stream_owner_dependency()
    owner = await anext(dependency)
    started = owner.start(body())
    first = await anext(started)
    await dependency.aclose()  # the request ended

    assert first == "data: first\n\n"
    assert closed.is_set()


# --- Chat builders: a stream that fails after it started ----------------------


def test_chat_stream_failure_ends_with_coded_error_then_done(reference_server, sdk):
    body = {"model": "failing", "messages": USER, "stream": True}
    with httpx.stream(
        "POST", f"{reference_server.base_url}/chat/completions", json=body
    ) as raw:
        lines = [line for line in raw.iter_lines() if line]
    stream = sdk.chat.completions.create(model="failing", messages=USER, stream=True)

    error = json.loads(lines[-2].removeprefix("data: "))["error"]
    assert lines[-1] == "data: [DONE]"
    assert (error["type"], error["code"]) == ("server_error", "server_error")
    assert "secret detail" not in "\n".join(lines)
    with pytest.raises(openai.APIError, match="Internal server error"):
        for _ in stream:
            pass
