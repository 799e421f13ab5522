"""Graphs ``lgos serve`` and ``lgos worker`` load (``batch_app:registry``)
for the batch tests on PostgreSQL. Each run leaves a ``start-<input>-<pid>``
marker (``LGOS_TEST_MARKER_DIR``), so a test sees which worker ran which
line, and how often; an input starting with ``hold`` waits for a
``release-hold`` marker. The graph also serves background Responses."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import MessagesState
from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRegistry
from support import one_node_graph


def registry() -> GraphRegistry:
    markers = Path(os.environ["LGOS_TEST_MARKER_DIR"])

    async def work(state: MessagesState) -> dict[str, Any]:
        text = state["messages"][-1].text
        (markers / f"start-{text}-{os.getpid()}-{uuid.uuid4().hex[:6]}").touch()
        if text.startswith("hold"):
            # A file another process creates: no event to wait on.
            while not (markers / "release-hold").exists():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        return {"messages": [AIMessage(content=f"done: {text}")]}

    return GraphRegistry(
        registry={
            "work": GraphConfig(
                graph=one_node_graph(work),
                description="work",
                features={GraphFeature.BACKGROUND},
            )
        }
    )
