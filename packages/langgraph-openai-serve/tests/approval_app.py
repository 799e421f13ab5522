"""A real uvicorn app whose graph presents interrupts as MCP approvals, for
the OpenAI Agents SDK's hosted-MCP approval loop."""

from __future__ import annotations

from collections import Counter

from fastapi import FastAPI
from interrupt_graphs import approval_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
)


def create_app() -> FastAPI:
    registry = GraphRegistry(
        registry={
            "refunds": GraphConfig(
                graph=approval_graph(InMemorySaver(), Counter()),
                description="Refunds after an approval.",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=InMemoryRunCoordinator(),
                interrupt_protocol="mcp_approval",
            )
        }
    )
    return LanggraphOpenaiServe(registry).bind_openai_api().app
