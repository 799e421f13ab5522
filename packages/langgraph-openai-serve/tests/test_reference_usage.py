"""The reference (``spec/lgos-reference.md``) executed section by section.

Code written against the reference must run unchanged: documented names work,
the older ones as aliases that warn with ``DeprecationWarning`` naming their
replacement. Sections that show client use run against a real uvicorn process
(``reference_app.py``) through the official ``openai`` SDK. The Chat builders
(``langgraph_openai_serve.chat_completions``) are checked by parsing what they
build with the SDK's types, and the Chat service and dependencies by a host
route written as the reference's own route is.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncGenerator, Iterator

import anyio
import httpx
import langgraph_openai_serve
import openai
import pytest
from conftest import LiveServer
from fastapi import FastAPI, Request
from interrupt_graphs import QUESTION, refund_graph
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    ClientFunctionTool,
    ClientSettings,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    InMemoryRunCoordinator,
    InvalidRequestError,
    LanggraphOpenaiServe,
    NamedFunctionToolChoice,
    Settings,
    citation_slice,
    client_event,
    status_event,
)
from langgraph_openai_serve.chat_completions import (
    ChatCompletionRequest,
    ChatCompletionStreamResponseBuilder,
    annotations_from_message,
    chat_completion_response,
    checkpoint_scope_dependency,
    convert_to_lc_messages,
    create_chat_completion,
    decode_chat_request,
    generate_completion,
    prepare_run,
    response_message,
    stream_completion,
    stream_owner_dependency,
    tool_calls_from_message,
    usage_info,
)
from openai import OpenAI
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
)
from pydantic import ConfigDict, ValidationError
from reference_app import PublicSettings, cited_message, settings_graph
from support import config, scripted_graph

USER = [{"role": "user", "content": "Hello"}]


@pytest.fixture(scope="module")
def reference_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(
        tmp_path_factory.mktemp("reference"), factory="reference_app:create_app"
    )
    yield server
    server.stop()


@pytest.fixture
def sdk(reference_server: LiveServer) -> OpenAI:
    return OpenAI(base_url=reference_server.base_url, api_key="unused", max_retries=0)


def _get(app: FastAPI, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)

    async def get() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.get(path)

    return anyio.run(get)


def _registry() -> GraphRegistry:
    return GraphRegistry(registry={"m": config(scripted_graph("Hi."))})


# --- OpenAI-Compatible API ---------------------------------------------------


def test_default_prefix_is_v1_and_bind_openai_api_prefix_changes_it():
    default = LanggraphOpenaiServe(_registry()).bind_openai_api()
    moved = LanggraphOpenaiServe(_registry()).bind_openai_api(prefix="/openai")

    assert _get(default.app, "/v1/models").status_code == 200
    assert _get(moved.app, "/openai/models").status_code == 200
    assert _get(moved.app, "/v1/models").status_code == 404


def test_lgos_openai_api_prefix_and_docs_settings(monkeypatch):
    hidden = LanggraphOpenaiServe(_registry()).bind_openai_api()
    monkeypatch.setenv("LGOS_OPENAI_API_PREFIX", "/api")
    monkeypatch.setenv("LGOS_OPENAI_API_DOCS_ENABLED", "true")
    shown = LanggraphOpenaiServe(_registry()).bind_openai_api()

    assert _get(hidden.app, "/v1/openapi.json").status_code == 404
    for path in ("/api/docs", "/api/redoc", "/api/openapi.json"):
        assert _get(shown.app, path).status_code == 200


def test_previous_response_id_is_rejected_for_non_interruptible_graphs(sdk):
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.responses.create(model="cited", input="Hi", previous_response_id="resp_1")

    assert caught.value.body["param"] == "previous_response_id"


# --- Settings: the module-level object of the reference ----------------------


def test_module_level_settings_object_and_docs_kwargs_warn_and_work(monkeypatch):
    monkeypatch.setattr(langgraph_openai_serve.settings, "_module_settings", None)
    monkeypatch.setenv("LGOS_OPENAI_API_PREFIX", "/v9")

    with pytest.deprecated_call(match=r"Settings\(\)"):
        from langgraph_openai_serve.settings import settings
    with pytest.deprecated_call(match=r"docs_kwargs\(\)"):
        kwargs = settings.fastapi_docs_kwargs
    with pytest.deprecated_call(match=r"docs_kwargs\(\)"):
        from langgraph_openai_serve.settings import fastapi_docs_kwargs

    assert settings.OPENAI_API_PREFIX == "/v9"
    assert kwargs == fastapi_docs_kwargs == Settings().docs_kwargs()
    assert kwargs == {"docs_url": None, "redoc_url": None, "openapi_url": None}


# --- Public API ----------------------------------------------------------------


def test_server_exposes_openai_app_registry_and_checkpoint_scope_on_the_host():
    app = FastAPI()
    registry = _registry()

    def scope(_request: object) -> str:
        return "tenant-a"

    server = LanggraphOpenaiServe(registry, app, checkpoint_scope=scope)
    server.bind_openai_api()

    assert server.openai_app is not app
    assert app.state.graph_registry is registry
    assert app.state.checkpoint_scope is scope
    default = LanggraphOpenaiServe(_registry(), FastAPI())
    assert callable(default.app.state.checkpoint_scope)


def test_registry_rejects_empty_and_unaddressable_ids_and_registers():
    with pytest.raises(ValidationError):
        GraphRegistry(registry={})
    with pytest.raises(ValidationError):
        GraphRegistry(registry={"a/b": config(scripted_graph("x"))})
    registry = _registry()
    with pytest.raises(TypeError):
        registry.registry["n"] = config(scripted_graph("x"))  # type: ignore[index]

    registry.register("n", config(scripted_graph("x")))

    assert registry.get_graph_names() == ["m", "n"]
    assert registry.get_graph("n").description == "test"


def test_graph_config_hosted_tools_is_a_deprecated_alias_of_server_tools():
    with pytest.deprecated_call(match="server_tools") as record:
        graph = GraphConfig(
            graph=scripted_graph("x"), description="d", hosted_tools=["lgos_lookup"]
        )
    with pytest.deprecated_call(match="server_tools"):
        hosted = graph.hosted_tools

    assert record[0].filename == __file__  # the warning points at the caller
    assert graph.server_tools == hosted == ("lgos_lookup",)
    with (
        pytest.deprecated_call(),
        pytest.raises(ValidationError, match="not both"),
    ):
        GraphConfig(
            graph=scripted_graph("x"),
            description="d",
            hosted_tools=["a"],
            server_tools=["b"],
        )


def test_hosted_tools_are_advertised_as_server_tools_only(sdk):
    model = sdk.models.retrieve("hosted").model_dump()

    assert model["lgos"]["server_tools"] == ["lgos_lookup"]
    assert "hosted_tools" not in json.dumps(model)


def test_a_selected_hosted_tool_reaches_the_graph_request(sdk):
    response = sdk.responses.create(
        model="hosted",
        input="Which tools?",
        tools=[{"type": "custom", "name": "lgos_lookup"}],
    )

    assert response.output_text == "Selected: lgos_lookup."


def test_graph_request_keeps_the_reference_signature_and_hosted_tools():
    request = GraphRequest(
        "m",
        {"k": "v"},
        "user-1",
        (ClientFunctionTool("f", "does f", {"type": "object"}, True),),
        NamedFunctionToolChoice("f"),
        False,
    )
    with pytest.deprecated_call(match="server_tools"):
        legacy = GraphRequest(model="m", hosted_tools=("lgos_lookup",))
    with pytest.deprecated_call(match="GraphRequest.server_tools"):
        selected = legacy.hosted_tools

    assert request.server_tools == ()
    assert dict(request.metadata) == {"k": "v"}
    assert selected == legacy.server_tools == ("lgos_lookup",)
    with pytest.raises(TypeError):
        request.metadata["k"] = "w"  # type: ignore[index]


@pytest.mark.anyio
async def test_build_context_accepts_the_reference_graph_argument():
    graph_config = GraphConfig(
        graph=settings_graph(), description="d", client_settings=PublicSettings
    )
    request = GraphRequest(
        model="m", metadata={"lgos_settings": '{"use_history":false}'}
    )
    graph = await graph_config.resolve_graph()

    current = await graph_config.build_context(request)
    with pytest.deprecated_call(match=r"build_context\(request\)"):
        legacy = await graph_config.build_context(request, graph)

    assert current == legacy == PublicSettings(use_history=False)


@pytest.mark.anyio
async def test_build_context_with_graph_refuses_a_graph_without_context_schema():
    graph_config = GraphConfig(
        graph=scripted_graph("x"),
        description="d",
        context_factory=lambda request, settings: {"tenant": "a"},
    )
    graph = await graph_config.resolve_graph()

    with (
        pytest.deprecated_call(),
        pytest.raises(langgraph_openai_serve.GraphConfigurationError),
    ):
        await graph_config.build_context(GraphRequest(model="m"), graph)


@pytest.mark.anyio
async def test_build_input_render_output_supports_and_resolve_graph():
    graph_config = GraphConfig(
        graph=scripted_graph("x"),
        description="d",
        features={GraphFeature.CLIENT_EVENTS},
    )
    message = cited_message()

    assert await graph_config.build_input(GraphRequest(model="m"), []) == {
        "messages": []
    }
    assert await graph_config.render_output({"messages": [message]}) is message
    assert graph_config.supports(GraphFeature.CLIENT_EVENTS)
    assert not graph_config.supports(GraphFeature.INTERRUPTS)
    assert await graph_config.resolve_graph() is graph_config.graph


# --- Runtime Settings ----------------------------------------------------------


def test_client_settings_validate_request_and_its_error_are_deprecated_aliases():
    good = GraphRequest(model="m", metadata={"lgos_settings": '{"use_history":false}'})
    bad = GraphRequest(model="m", metadata={"lgos_settings": '{"use_history":"no"}'})
    with pytest.deprecated_call(match="InvalidRequestError"):
        from langgraph_openai_serve import ClientSettingsValidationError

    with pytest.deprecated_call(match=r"from_metadata\(request.metadata\)"):
        settings = PublicSettings.validate_request(good)
    with (
        pytest.deprecated_call(),
        pytest.raises(ClientSettingsValidationError) as caught,
    ):
        PublicSettings.validate_request(bad)

    assert settings == PublicSettings(use_history=False)
    assert PublicSettings.defaults() == PublicSettings()
    assert isinstance(caught.value, InvalidRequestError)
    assert caught.value.param == "metadata.lgos_settings"
    # The new path raises the same class, so old except clauses keep working.
    with pytest.raises(ClientSettingsValidationError):
        PublicSettings.from_metadata(bad.metadata)


def test_graph_config_validate_client_settings_is_a_deprecated_check():
    class Loose(ClientSettings):
        model_config = ConfigDict(strict=False)
        value: int = 1

    with pytest.deprecated_call(match="GraphConfig"):
        assert GraphConfig.validate_client_settings(PublicSettings) is PublicSettings
    with (
        pytest.deprecated_call(),
        pytest.raises(langgraph_openai_serve.GraphConfigurationError, match="strict"),
    ):
        GraphConfig.validate_client_settings(Loose)


def test_settings_travel_in_metadata_and_become_the_runtime_context(sdk):
    history = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
    ]

    default = sdk.responses.create(model="settings", input=history)
    changed = sdk.responses.create(
        model="settings",
        input=history,
        metadata={"lgos_settings": '{"use_history":false}'},
    )

    assert default.output_text == "I read 3 message(s)."
    assert changed.output_text == "I read 1 message(s)."


def test_invalid_settings_are_rejected_naming_the_metadata_key(sdk):
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(
            model="settings",
            messages=USER,
            metadata={"lgos_settings": '{"use_history":"no"}'},
        )

    assert caught.value.body["param"] == "metadata.lgos_settings"


def test_model_retrieval_publishes_the_settings_descriptor(sdk):
    descriptor = sdk.models.retrieve("settings").model_dump()["lgos"]["client_settings"]

    assert descriptor["schema_version"] == 1
    assert descriptor["defaults"] == {"use_history": True}
    schema = descriptor["json_schema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["use_history"]["title"] == "Use conversation history"


# --- Interrupts ----------------------------------------------------------------


def test_interrupt_registration_requirements():
    with pytest.raises(ValidationError, match="run_coordinator"):
        GraphConfig(
            graph=refund_graph(InMemorySaver(), Counter()),
            description="d",
            features={GraphFeature.INTERRUPTS},
        )
    with pytest.raises(ValidationError, match="checkpointer"):
        GraphConfig(
            graph=scripted_graph("x"),
            description="d",
            features={GraphFeature.INTERRUPTS},
            run_coordinator=InMemoryRunCoordinator(),
        )


def test_pause_and_resume_in_the_scope_the_resolver_returns(sdk):
    tenant = {"x-tenant": "acme"}
    paused = sdk.responses.create(
        model="interruptible", input="Refund order 7", extra_headers=tenant
    )
    (call,) = paused.output
    answer = {"type": "function_call_output", "call_id": call.call_id, "output": "ok"}

    with pytest.raises(openai.NotFoundError):
        sdk.responses.create(
            model="interruptible",
            previous_response_id=paused.id,
            input=[answer],
            extra_headers={"x-tenant": "other"},
        )
    resumed = sdk.responses.create(
        model="interruptible",
        previous_response_id=paused.id,
        input=[answer],
        extra_headers=tenant,
    )

    assert (call.type, call.name) == ("function_call", "lgos_interrupt")
    assert json.loads(call.arguments) == QUESTION
    assert paused.id.startswith("resp_lg_")
    assert call.call_id.startswith("call_lg_")
    assert resumed.output_text == "Refund ok."


@pytest.mark.anyio
async def test_postgres_run_coordinator_takes_the_documented_arguments(
    postgres_pool_factory,
):
    from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator

    pool = await postgres_pool_factory(max_size=3)
    coordinator = PostgresRunCoordinator(pool, max_concurrent_leases=2)

    async with coordinator.lease("reference-key"):
        with pytest.raises(langgraph_openai_serve.RunBusyError):
            async with coordinator.lease("reference-key"):
                pass


# --- Langfuse Tracing ----------------------------------------------------------


def test_langfuse_callback_is_importable_where_documented():
    from langgraph_openai_serve.integrations.langfuse import get_langfuse_callback

    assert callable(get_langfuse_callback)


# --- Streaming Status ----------------------------------------------------------


def test_status_event_writes_the_documented_envelope():
    assert status_event("Generating audio", namespace=("media",)) == {
        "type": "lgos.client_event",
        "schema_version": 1,
        "event": {
            "type": "status",
            "namespace": ["media"],
            "data": {"description": "Generating audio", "done": False, "hidden": False},
        },
    }
    assert client_event(
        "status",
        {"description": "x", "done": True, "hidden": False},
        namespace=("media",),
    ) == status_event("x", done=True, namespace=("media",))


def test_status_streams_as_commentary_on_responses_and_not_on_chat(sdk):
    with sdk.responses.stream(model="status", input="Make audio") as stream:
        final = stream.get_final_response()
    chat = sdk.chat.completions.create(model="status", messages=USER, stream=True)
    chat_text = "".join(c.choices[0].delta.content or "" for c in chat if c.choices)

    texts = {"commentary": [], "final_answer": []}
    for item in final.output:
        texts[item.phase].append(item.content[0].text)
    assert texts == {
        "commentary": ["Generating audio", "Audio ready"],
        "final_answer": ["Your audio is ready."],
    }
    assert chat_text == "Your audio is ready."


# --- Citations -----------------------------------------------------------------


def test_citations_reach_both_apis_and_citation_slice_checks_them(sdk):
    response = sdk.responses.create(model="cited", input="Sources?")
    chat = sdk.chat.completions.create(model="cited", messages=USER)

    (annotation,) = response.output[0].content[0].annotations
    text = response.output_text
    assert text == "Read the source [1]."
    assert (annotation.url, annotation.title) == (
        "https://example.com/source",
        "Example source",
    )
    assert text[citation_slice(annotation.start_index, annotation.end_index, text)] == (
        "source"
    )
    (chat_annotation,) = chat.choices[0].message.annotations
    assert chat_annotation.url_citation.url == "https://example.com/source"
    with pytest.raises(ValueError, match="outside a text"):
        citation_slice(9, 40, text)


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


# --- Chat builders and helpers ----------------------------------------------


def _frames(*frames: str) -> list[str]:
    """The ``data:`` payloads of SSE text, checking the framing."""
    text = "".join(frames)
    assert text.endswith("\n\n")
    events = text.removesuffix("\n\n").split("\n\n")
    assert all(event.startswith("data: ") for event in events)
    return [event.removeprefix("data: ") for event in events]


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

    payloads = _frames(
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

    payloads = _frames(builder.role(), builder.error("It broke."), builder.done())

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

    assert caught.value.param == "messages.[0].tool_call_id"


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


# --- Chat service and dependencies ------------------------------------------


def _chat_request(**fields: object) -> ChatCompletionRequest:
    return ChatCompletionRequest.model_validate(
        {"model": "m", "messages": USER, **fields}
    )


@pytest.mark.anyio
async def test_prepare_run_then_generate_completion():
    request = _chat_request()
    graph_request, messages = decode_chat_request(request)

    run = await prepare_run(graph_request, messages, _registry())
    completion = await generate_completion(request, run)

    assert isinstance(completion, ChatCompletion)
    assert completion.choices[0].message.content == "Hi."
    assert completion.usage.total_tokens > 0


@pytest.mark.anyio
async def test_prepare_run_then_stream_completion_yields_sse_text():
    request = _chat_request(stream=True, stream_options={"include_usage": True})
    graph_request, messages = decode_chat_request(request)
    run = await prepare_run(graph_request, messages, _registry())

    text = "".join([frame async for frame in stream_completion(request, run)])

    payloads = _frames(text)
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
    LanggraphOpenaiServe(_registry(), app, checkpoint_scope=lambda _request: "")
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
