"""The reference (``spec/lgos-reference.md``) executed section by section.

Code written against the reference must run unchanged: documented names work,
the older ones as aliases that warn with ``DeprecationWarning`` naming their
replacement. Sections that show client use run against a real uvicorn process
(``reference_app.py``) through the official ``openai`` SDK. The Chat part is
``test_reference_chat_usage.py``.
"""

from __future__ import annotations

import json
from collections import Counter

import anyio
import httpx
import langgraph_openai_serve
import openai
import pytest
from fastapi import FastAPI
from interrupt_graphs import QUESTION, refund_graph
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
from pydantic import ConfigDict, ValidationError
from reference_app import PublicSettings, cited_message, settings_graph
from support import config, hello_registry, scripted_graph

USER = [{"role": "user", "content": "Hello"}]


def _get(app: FastAPI, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)

    async def get() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.get(path)

    return anyio.run(get)


# --- OpenAI-Compatible API ---------------------------------------------------


def test_default_prefix_is_v1_and_bind_openai_api_prefix_changes_it():
    default = LanggraphOpenaiServe(hello_registry()).bind_openai_api()
    moved = LanggraphOpenaiServe(hello_registry()).bind_openai_api(prefix="/openai")

    assert _get(default.app, "/v1/models").status_code == 200
    assert _get(moved.app, "/openai/models").status_code == 200
    assert _get(moved.app, "/v1/models").status_code == 404


def test_lgos_openai_api_prefix_and_docs_settings(monkeypatch):
    hidden = LanggraphOpenaiServe(hello_registry()).bind_openai_api()
    monkeypatch.setenv("LGOS_OPENAI_API_PREFIX", "/api")
    monkeypatch.setenv("LGOS_OPENAI_API_DOCS_ENABLED", "true")
    shown = LanggraphOpenaiServe(hello_registry()).bind_openai_api()

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
    registry = hello_registry()

    def scope(_request: object) -> str:
        return "tenant-a"

    server = LanggraphOpenaiServe(registry, app, checkpoint_scope=scope)
    server.bind_openai_api()

    assert server.openai_app is not app
    assert app.state.graph_registry is registry
    assert app.state.checkpoint_scope is scope
    default = LanggraphOpenaiServe(hello_registry(), FastAPI())
    assert callable(default.app.state.checkpoint_scope)


def test_registry_rejects_empty_and_unaddressable_ids_and_registers():
    with pytest.raises(ValidationError):
        GraphRegistry(registry={})
    with pytest.raises(ValidationError):
        GraphRegistry(registry={"a/b": config(scripted_graph("x"))})
    registry = hello_registry()
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
