"""A pytest plugin for the background tests on the in-process backend
(``test_background_runs.py``, ``test_background_streams.py``,
``test_background_interrupts.py``).

- ``background_client``: an SDK client of an in-process app on
  ``MemoryBackend`` with one run at a time and the tenant from ``x-tenant``,
  serving ``bg`` (answers at once), ``gated`` (held by ``background_gate``),
  ``failing`` (raises), ``foreground`` (no background feature) and
  ``refund`` (the interrupt graph, checkpointed in ``refund_saver``,
  counting its steps in ``refund_steps``).
- ``background_gate``: a ``Gate`` that holds a run open until released and
  notes its cancellation.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import openai
import pytest
from interrupt_graphs import refund_graph
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.backends.memory import MemoryBackend
from support import one_node_graph, scripted_graph


class Gate:
    """Lets a test hold a graph run open and see it cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def node(self, state):
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return {"messages": [AIMessage(content="released")]}


@pytest.fixture
def background_gate():
    return Gate()


@pytest.fixture
def refund_steps():
    return Counter()


@pytest.fixture
def refund_saver():
    """The refund graph's checkpoints."""
    return InMemorySaver()


@pytest.fixture
def background_client(background_gate, refund_steps, refund_saver):
    background = {GraphFeature.BACKGROUND}
    interrupt_features = {GraphFeature.BACKGROUND, GraphFeature.INTERRUPTS}
    registry = GraphRegistry(
        registry={
            "bg": GraphConfig(
                graph=scripted_graph(responder=lambda _: "Long work is done."),
                description="background",
                features=background,
            ),
            "gated": GraphConfig(
                graph=one_node_graph(background_gate.node),
                description="gated",
                features=background,
            ),
            "failing": GraphConfig(
                graph=scripted_graph(RuntimeError("secret")),
                description="fails",
                features=background,
            ),
            "foreground": GraphConfig(graph=scripted_graph("x"), description="fg"),
            "refund": GraphConfig(
                graph=refund_graph(refund_saver, refund_steps),
                description="refund",
                features=interrupt_features,
                run_coordinator=InMemoryRunCoordinator(),
            ),
        }
    )
    server = LanggraphOpenaiServe(
        graphs=registry,
        checkpoint_scope=lambda request: request.headers.get("x-tenant", "default"),
        settings=Settings(),
        backend=MemoryBackend(concurrency=1),
    ).bind_openai_api()
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    )
    return openai.AsyncOpenAI(
        base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
    )
