"""The workload served by LGOS: ``uvicorn --factory lgos_bench.lgos_app:create_app``."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
)

from lgos_bench.workload import (
    CITED,
    GATES_ENV,
    IDLE,
    PLAIN,
    STATUS,
    TOOL,
    TOOL_NAME,
    WAIT,
    Workload,
    build_graphs,
    wait_graph,
)


def create_app(workload: Workload | None = None) -> FastAPI:
    """LGOS with its defaults, serving every bench graph."""
    graphs = build_graphs(workload or Workload.from_env())
    configs = {
        PLAIN: GraphConfig(graph=graphs[PLAIN], description="N streamed tokens"),
        STATUS: GraphConfig(
            graph=graphs[STATUS],
            description="three statuses, then N tokens",
            features=frozenset({GraphFeature.CLIENT_EVENTS}),
        ),
        CITED: GraphConfig(graph=graphs[CITED], description="N tokens, 2 citations"),
        TOOL: GraphConfig(
            graph=graphs[TOOL],
            description="N tokens, then a client tool call",
            client_tools=(TOOL_NAME,),
        ),
        IDLE: GraphConfig(graph=graphs[IDLE], description="waits, then answers"),
    }
    serve = LanggraphOpenaiServe(graphs=GraphRegistry(registry=configs))
    return serve.bind_openai_api().app


def background_registry() -> GraphRegistry:
    """The plain graph with ``background=true``, for ``lgos serve`` and
    ``lgos worker`` in the background-latency bench (``LGOS_REGISTRY``)."""
    graph = build_graphs(Workload.from_env())[PLAIN]
    config = GraphConfig(
        graph=graph,
        description="N streamed tokens, run by a worker",
        features=frozenset({GraphFeature.BACKGROUND}),
    )
    return GraphRegistry(registry={PLAIN: config})


def scale_registry() -> GraphRegistry:
    """``lgos-bench scale``'s graphs for ``lgos serve`` and ``lgos worker``:
    the plain graph (foreground throughput) and one whose background run
    waits like a model call and says where and when it ran (``wait_graph``;
    its gate folder from ``LGOS_BENCH_GATES``)."""
    workload = Workload.from_env()
    configs = {
        PLAIN: GraphConfig(
            graph=build_graphs(workload)[PLAIN], description="N streamed tokens"
        ),
        WAIT: GraphConfig(
            graph=wait_graph(workload.wait_seconds, Path(os.environ[GATES_ENV])),
            description="waits like a model call, then says where and when it ran",
            features=frozenset({GraphFeature.BACKGROUND}),
        ),
    }
    return GraphRegistry(registry=configs)
