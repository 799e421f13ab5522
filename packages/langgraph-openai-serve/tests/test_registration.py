"""Registration catches configuration mistakes before any request."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphConfigurationError,
    GraphFeature,
    GraphNotFoundError,
    GraphRegistry,
)
from pydantic import ConfigDict, Field, ValidationError
from support import config, scripted_graph

pytestmark = pytest.mark.anyio


class _Coordinator:
    @asynccontextmanager
    async def lease(self, key):
        yield


def test_registry_needs_at_least_one_graph():
    with pytest.raises(ValidationError, match="at least one graph"):
        GraphRegistry(registry={})


@pytest.mark.parametrize("model_id", ["a/b", "", "..", "with space", "é"])
def test_model_ids_must_be_one_url_path_segment(model_id):
    with pytest.raises(ValidationError, match="one URL path segment"):
        GraphRegistry(registry={model_id: config(scripted_graph("x"))})


def test_registry_keys_are_read_only_but_register_adds_through_validation():
    registry = GraphRegistry(registry={"a": config(scripted_graph("x"))})

    with pytest.raises(TypeError):
        registry.registry["b"] = config(scripted_graph("y"))  # type: ignore[index]
    registry.register("b", config(scripted_graph("y")))
    with pytest.raises(ValidationError):
        registry.register("c/d", config(scripted_graph("z")))

    assert registry.get_graph_names() == ["a", "b"]
    with pytest.raises(GraphNotFoundError):
        registry.get_graph("c/d")


def test_description_is_required():
    with pytest.raises(ValidationError, match="description"):
        GraphConfig(graph=scripted_graph("x"))  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="description"):
        GraphConfig(graph=scripted_graph("x"), description="")


def test_graph_must_be_compiled_graph_or_factory():
    with pytest.raises(ValidationError, match="graph"):
        GraphConfig(graph="not a graph", description="d")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"server_tools": ["bad name"]}, "server tool name"),
        ({"client_tools": ["dup", "dup"]}, "unique"),
        ({"server_tools": ["x"], "client_tools": ["x"]}, "both server and client"),
        ({"streamable_node_names": []}, "must not be empty"),
        ({"run_coordinator": _Coordinator()}, "requires GraphFeature.INTERRUPTS"),
        ({"features": {GraphFeature.INTERRUPTS}}, "need a run_coordinator"),
    ],
)
def test_inconsistent_options_are_rejected(options, message):
    with pytest.raises(ValidationError, match=message):
        config(scripted_graph("x"), **options)


def test_interrupts_need_a_fully_async_checkpointer():
    graph = scripted_graph("x")

    with pytest.raises(ValidationError, match="asynchronous checkpointer"):
        config(
            graph, features={GraphFeature.INTERRUPTS}, run_coordinator=_Coordinator()
        )

    graph.checkpointer = InMemorySaver()
    registered = config(
        graph, features={GraphFeature.INTERRUPTS}, run_coordinator=_Coordinator()
    )
    assert registered.supports(GraphFeature.INTERRUPTS)


async def test_factories_are_called_once_and_checked():
    calls = []

    async def factory():
        calls.append(1)
        return scripted_graph("x")

    registered = config(factory)
    first = await registered.resolve_graph()
    second = await registered.resolve_graph()

    assert first is second
    assert calls == [1]
    with pytest.raises(GraphConfigurationError, match="not a compiled LangGraph"):
        await config(lambda: "nope").resolve_graph()


class GoodSettings(ClientSettings):
    audience: str = "general"


class NoDefault(ClientSettings):
    audience: str


class Loosened(ClientSettings):
    model_config = ConfigDict(**{**ClientSettings.model_config, "extra": "allow"})
    audience: str = "general"


class Excluded(ClientSettings):
    secret: str = Field(default="x", exclude=True)


class BadDefault(ClientSettings):
    count: int = "three"  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (NoDefault, "needs a default"),
        (Loosened, "extra='forbid'"),
        (Excluded, "excluded from serialization"),
        (BadDefault, "invalid defaults"),
        (ClientSettings, "subclass"),
    ],
)
def test_client_settings_models_are_checked_at_registration(model, message):
    with pytest.raises(ValidationError, match=message):
        config(
            scripted_graph("x"), client_settings=model, context_factory=lambda r, s: s
        )


def test_settings_used_as_context_must_be_the_graph_context_schema():
    with pytest.raises(ValidationError, match="context_schema"):
        config(scripted_graph("x"), client_settings=GoodSettings)
