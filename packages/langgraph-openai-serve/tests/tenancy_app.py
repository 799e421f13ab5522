"""Graphs ``lgos serve`` loads (``tenancy_app:registry``) for the tenancy
tests: a background run that waits until cancelled, a quick background note,
a refund approval that pauses (also in the background), and ``whoami``,
which answers with the tenant its request runs for (``GraphRequest.scope``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from interrupt_graphs import refund_graph
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit.graphs import caller_context, whoami_graph
from starlette.requests import Request
from support import one_node_graph, single_model_graph


def registry() -> GraphRegistry:
    model = ScriptedChatModel(responder=lambda messages: f"Noted: {messages[-1].text}")

    async def wait_for_cancel(state: MessagesState) -> dict[str, Any]:
        await asyncio.Event().wait()
        return {"messages": [AIMessage(content="never")]}

    background = {GraphFeature.BACKGROUND}
    return GraphRegistry(
        registry={
            "notes": GraphConfig(
                graph=single_model_graph(model),
                description="notes",
                features=background,
            ),
            "forever": GraphConfig(
                graph=one_node_graph(wait_for_cancel),
                description="runs until cancelled",
                features=background,
            ),
            "whoami": GraphConfig(
                graph=whoami_graph(),
                description="answers with the request's scope",
                features=background,
                context_factory=caller_context,
            ),
            "refund": GraphConfig(
                graph=refund_graph(InMemorySaver(), Counter()),
                description="refund approvals",
                features={GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND},
                run_coordinator=InMemoryRunCoordinator(),
            ),
        }
    )


def team_scope(request: Request) -> str:
    """A custom resolver (``LGOS_CHECKPOINT_SCOPE=tenancy_app:team_scope``)."""
    return request.headers.get("x-team", "no-team")
