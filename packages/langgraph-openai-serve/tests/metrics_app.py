"""Graphs for the metrics and tracing tests over real processes (``lgos
serve`` / ``lgos worker`` load ``metrics_app:registry``): one that streams
words with reported usage, one that fails, one with a server tool, and a
background one."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRegistry
from langgraph_openai_serve.testing import ScriptedChatModel
from server_tool_graph import build_server_tool_graph, tool_context

WORDS = "one two three"


def _one_node(name: str, node: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node(name, node)
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile()


def registry() -> GraphRegistry:
    model = ScriptedChatModel(responder=lambda _: WORDS)

    async def speak(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def explode(state: MessagesState) -> dict[str, list[BaseMessage]]:
        raise RuntimeError("the graph broke")

    return GraphRegistry(
        registry={
            "words": GraphConfig(
                graph=_one_node("speak", speak),
                description="streams three words",
                features=[GraphFeature.BACKGROUND],
            ),
            "boom": GraphConfig(
                graph=_one_node("explode", explode), description="always fails"
            ),
            "tools": GraphConfig(
                # package_version needs no search service: nothing listens here.
                graph=build_server_tool_graph("http://127.0.0.1:9"),
                description="a server tool",
                server_tools=["package_version", "web_search"],
                context_factory=tool_context,
            ),
        }
    )
