"""The demo registry: every demo graph as an OpenAI model.

``build_registry()`` reads ``DEMO_*`` settings when called (never at import),
so ``LGOS_REGISTRY=lgos_demos.registry:build_registry lgos serve`` works too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GenerationControl,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
)
from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator

from lgos_demos.chat_model import demo_chat_model
from lgos_demos.database import MAX_CONCURRENT_LEASES, demo_pool
from lgos_demos.files_client import FilesClient
from lgos_demos.graphs import server_tools, web_search
from lgos_demos.graphs.background import BackgroundSettings, build_background_graph
from lgos_demos.graphs.citations import build_citations_graph
from lgos_demos.graphs.context import request_context
from lgos_demos.graphs.file_display import DISPLAY_FILE, build_file_display_graph
from lgos_demos.graphs.interrupts import PostgresInterruptsGraph, build_interrupts_graph
from lgos_demos.graphs.router import build_router_graph
from lgos_demos.graphs.simple import SimpleSettings, build_simple_graph
from lgos_demos.graphs.structured import build_structured_graph, generation_context
from lgos_demos.search_client import SearchClient
from lgos_demos.settings import DemoSettings

EVENTS = frozenset({GraphFeature.CLIENT_EVENTS})


@dataclass
class DemoRegistry:
    """The registry and what must be closed when the serving process stops."""

    registry: GraphRegistry
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def close(self) -> None:
        for close in self.closers:
            await close()


def build_registry(settings: DemoSettings | None = None) -> GraphRegistry:
    """The demo graphs, wired to the model, search and Files API in ``settings``."""
    return build_demo_registry(settings).registry


def _interrupts(model: BaseChatModel, config: DemoSettings) -> tuple[GraphConfig, Any]:
    """The ``interrupts`` graph on PostgreSQL when configured, else in memory."""
    description = (
        "Refund approval: pauses with an lgos_interrupt call (approve, reject "
        "or your own words), then answers once you decide; also with "
        "background=true."
    )
    features = {GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND}
    if config.DATABASE_URL is None:
        graph = GraphConfig(
            graph=build_interrupts_graph(model, InMemorySaver()),
            description=description,
            streamable_node_names=["answer"],
            features=features,
            run_coordinator=InMemoryRunCoordinator(),
        )
        return graph, None
    factory = PostgresInterruptsGraph(
        model, demo_pool(config.DATABASE_URL.get_secret_value())
    )
    graph = GraphConfig(
        graph=factory,
        description=description,
        streamable_node_names=["answer"],
        features=features,
        run_coordinator=PostgresRunCoordinator(
            factory.pool, max_concurrent_leases=MAX_CONCURRENT_LEASES
        ),
    )
    return graph, factory.close


def build_demo_registry(settings: DemoSettings | None = None) -> DemoRegistry:
    """``build_registry``, plus the pool closers the demo API runs at shutdown."""
    config = settings if settings is not None else DemoSettings()
    model = demo_chat_model(config)
    search = SearchClient(config.SEARCH_URL)
    files = FilesClient(config.FILES_URL, config.FILES_API_KEY.get_secret_value())
    interrupts, close_interrupts = _interrupts(model, config)
    registry = GraphRegistry(
        registry={
            "simple": GraphConfig(
                graph=build_simple_graph(model),
                description="One model call shaped by runtime settings: "
                "audience and whether the model sees earlier turns.",
                client_settings=SimpleSettings,
            ),
            "citations": GraphConfig(
                graph=build_citations_graph(model, search),
                description="Searches the LGOS docs and answers with url_citation "
                "annotations to the exact pages it used.",
                streamable_node_names=["answer"],
                features=EVENTS,
            ),
            "server-tools": GraphConfig(
                graph=server_tools.build_server_tools_graph(model, search),
                description="Server-executed tools: a custom package_version tool "
                "and web_search, selected per request (Responses).",
                streamable_node_names=["answer"],
                features=EVENTS,
                server_tools=server_tools.SERVER_TOOLS,
                context_factory=request_context,
            ),
            "web-search": GraphConfig(
                graph=web_search.build_web_search_graph(model, search),
                description="Answers with the web_search server tool and cites "
                "the results (Responses).",
                streamable_node_names=["answer"],
                features=EVENTS,
                server_tools=web_search.SERVER_TOOLS,
                context_factory=request_context,
            ),
            "file-display": GraphConfig(
                graph=build_file_display_graph(model, files),
                description="Charts an attached CSV file, uploads the chart and "
                "asks the client to show it with display_file.",
                streamable_node_names=["answer"],
                features=EVENTS | {GraphFeature.FILE_INPUTS},
                client_tools=[DISPLAY_FILE],
                context_factory=request_context,
            ),
            "router": GraphConfig(
                graph=build_router_graph(model, search),
                description="A private planner call routes the question; only "
                "the answer streams.",
                features=EVENTS,
            ),
            "structured": GraphConfig(
                graph=build_structured_graph(model),
                description="Takes the client's generation controls (temperature, "
                "top_p, max tokens, stop, seed, penalties) and a JSON schema "
                "output format, and passes them to its model.",
                generation_controls=frozenset(GenerationControl),
                features={GraphFeature.STRUCTURED_OUTPUT},
                context_factory=generation_context,
            ),
            "interrupts": interrupts,
            "background": GraphConfig(
                graph=build_background_graph(model),
                description="A long multi-step job with a status update per "
                "step; submit it with background=true and poll or cancel it.",
                streamable_node_names=["answer"],
                features=EVENTS | {GraphFeature.BACKGROUND},
                client_settings=BackgroundSettings,
            ),
        }
    )
    closers = [] if close_interrupts is None else [close_interrupts]
    return DemoRegistry(registry=registry, closers=closers)
