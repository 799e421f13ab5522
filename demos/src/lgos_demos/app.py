"""The demo API: the example registry served on the OpenAI routes.

Run with ``uv run just up`` (or ``lgos-demo-api``); it listens on
http://127.0.0.1:8000/v1 by default.
"""

from __future__ import annotations

from fastapi import FastAPI
from langgraph_openai_serve import GraphConfig, GraphRegistry, LanggraphOpenaiServe

from lgos_demos.graphs import build_echo_graph, build_planner_graph


def build_registry() -> GraphRegistry:
    return GraphRegistry(
        registry={
            "echo": GraphConfig(
                graph=build_echo_graph,
                description="Offline example: streams a reply quoting your message.",
            ),
            "planner": GraphConfig(
                graph=build_planner_graph,
                description="Offline example: a private planner call, then a "
                "streamed answer.",
                streamable_node_names=["answer"],
            ),
        }
    )


def create_app() -> FastAPI:
    app = FastAPI(title="LGOS demo API")
    LanggraphOpenaiServe(graphs=build_registry(), app=app).bind_openai_api()
    return app
