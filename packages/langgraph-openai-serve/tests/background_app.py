"""Graphs for the PostgreSQL background tests (``lgos serve`` / ``lgos worker``
load ``background_app:registry``). Runs leave marker files so the tests can
count executions across processes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRegistry
from langgraph_openai_serve.testing import ScriptedChatModel


def _graph(node: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("work", node)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    return builder.compile()


def registry() -> GraphRegistry:
    markers = Path(os.environ["LGOS_TEST_MARKER_DIR"])
    model = ScriptedChatModel(
        responder=lambda messages: f"Finished {messages[-1].text}.", token_delay=0.02
    )

    async def work(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        (markers / f"run-{tag}-{os.getpid()}").touch()
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def wait_forever(state: MessagesState) -> dict[str, Any]:
        tag = state["messages"][-1].text
        (markers / f"started-{tag}").touch()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            (markers / f"cancelled-{tag}").touch()
            raise
        return {"messages": [AIMessage(content="never")]}

    async def fail(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError("the database password is hunter2")

    features = {GraphFeature.BACKGROUND}
    return GraphRegistry(
        registry={
            "job": GraphConfig(
                graph=_graph(work), description="job", features=features
            ),
            "forever": GraphConfig(
                graph=_graph(wait_forever), description="forever", features=features
            ),
            "boom": GraphConfig(
                graph=_graph(fail), description="boom", features=features
            ),
        }
    )
