"""The demo registry: every demo graph as an OpenAI model.

``build_registry()`` reads ``DEMO_*`` settings when called (never at import),
so ``LGOS_REGISTRY=lgos_demos.registry:build_registry lgos serve`` works too.
"""

from __future__ import annotations

from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRegistry

from lgos_demos.chat_model import demo_chat_model
from lgos_demos.files_client import FilesClient
from lgos_demos.graphs import server_tools, web_search
from lgos_demos.graphs.citations import build_citations_graph
from lgos_demos.graphs.context import request_context
from lgos_demos.graphs.file_display import DISPLAY_FILE, build_file_display_graph
from lgos_demos.graphs.router import build_router_graph
from lgos_demos.graphs.simple import SimpleSettings, build_simple_graph
from lgos_demos.search_client import SearchClient
from lgos_demos.settings import DemoSettings

EVENTS = frozenset({GraphFeature.CLIENT_EVENTS})


def build_registry(settings: DemoSettings | None = None) -> GraphRegistry:
    """The demo graphs, wired to the model, search and Files API in ``settings``."""
    config = settings if settings is not None else DemoSettings()
    model = demo_chat_model(config)
    search = SearchClient(config.SEARCH_URL)
    files = FilesClient(config.FILES_URL, config.FILES_API_KEY.get_secret_value())
    return GraphRegistry(
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
        }
    )
