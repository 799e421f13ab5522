"""Langfuse tracing switched on without what it needs fails at startup,
naming what is missing."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from langgraph_openai_serve import (
    GraphConfigurationError,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.integrations import langfuse as langfuse_integration
from langgraph_openai_serve.integrations.langfuse import get_langfuse_callback
from support import config, scripted_graph

PUBLIC_KEY = "pk-lf-lgos-test"
SECRET_KEY = "sk-lf-lgos-test"


def _server(**settings: Any) -> LanggraphOpenaiServe:
    registry = GraphRegistry(registry={"m": config(scripted_graph("x"))})
    return LanggraphOpenaiServe(graphs=registry, settings=Settings(**settings))


@pytest.mark.parametrize(
    ("present", "missing"),
    [
        ((), "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are not set"),
        (("LANGFUSE_PUBLIC_KEY",), "LANGFUSE_SECRET_KEY is not set"),
        (("LANGFUSE_SECRET_KEY",), "LANGFUSE_PUBLIC_KEY is not set"),
    ],
)
def test_binding_without_keys_fails_naming_them(monkeypatch, present, missing):
    for name in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name in present:
        monkeypatch.setenv(name, "set")
    server = _server(ENABLE_LANGFUSE=True)

    with pytest.raises(GraphConfigurationError, match=missing):
        server.bind_openai_api()


def test_the_lgos_enable_langfuse_variable_turns_the_check_on(monkeypatch):
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    monkeypatch.setenv("LGOS_ENABLE_LANGFUSE", "true")
    registry = GraphRegistry(registry={"m": config(scripted_graph("x"))})

    with pytest.raises(GraphConfigurationError, match="LANGFUSE_PUBLIC_KEY"):
        LanggraphOpenaiServe(graphs=registry).bind_openai_api()


def test_tracing_off_needs_no_keys(monkeypatch):
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)

    _server(ENABLE_LANGFUSE=False).bind_openai_api()


def test_binding_without_the_package_fails_naming_the_extra(monkeypatch):
    # A None entry in sys.modules is Python's own marker for "this module
    # cannot be imported": importing it raises ModuleNotFoundError and
    # importlib.util.find_spec() reports None, as when it is not installed.
    monkeypatch.setitem(sys.modules, "langfuse", None)
    monkeypatch.setattr(langfuse_integration, "_handler", None)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", PUBLIC_KEY)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET_KEY)

    with pytest.raises(
        GraphConfigurationError, match=r"langgraph-openai-serve\[tracing\]"
    ):
        _server(ENABLE_LANGFUSE=True).bind_openai_api()
    with pytest.raises(GraphConfigurationError, match="'langfuse' package"):
        get_langfuse_callback()
