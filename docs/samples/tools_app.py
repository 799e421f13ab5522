import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphRegistry,
    GraphRequest,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.testing import ScriptedChatModel


@tool(response_format="content_and_artifact")
def web_search(query: str) -> tuple[str, list[dict[str, str]]]:
    """Search the web; returns titles and links."""
    # A real tool asks a search engine (the demos use a SearXNG-compatible one).
    found = [{"title": "LangGraph", "url": "https://www.langchain.com/langgraph"}]
    return "\n".join(f"{r['title']}: {r['url']}" for r in found), found


@tool
def word_count(text: str) -> str:
    """Count the words of a text."""
    return f"{len(text.split())} words"


TOOLS: dict[str, BaseTool] = {t.name: t for t in (web_search, word_count)}


@dataclass(frozen=True)
class Selection:
    """The server tools this request selected."""

    names: tuple[str, ...] = ()

    def tools(self) -> list[BaseTool]:
        return [TOOLS[name] for name in self.names]


def selection(request: GraphRequest, settings: ClientSettings | None) -> Selection:
    return Selection(names=request.server_tools)


def stand_in_selector(tools: list[BaseTool]) -> ScriptedChatModel:
    """Calls each tool once with the question; a real model chooses itself."""

    def calls(messages: list[BaseMessage]) -> AIMessage:
        question = messages[-1].text
        tool_calls = [
            {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "name": t.name,
                "args": {"query" if t.name == "web_search" else "text": question},
            }
            for t in tools
        ]
        return AIMessage(content="", tool_calls=tool_calls)

    return ScriptedChatModel(responder=calls)


def stand_in_answer(messages: list[BaseMessage]) -> str:
    results = [m.text for m in messages if isinstance(m, ToolMessage)]
    return "Results: " + "; ".join(results) if results else "No tool was selected."


answerer = ScriptedChatModel(responder=stand_in_answer)


async def select(state: MessagesState, runtime: Runtime[Selection]) -> dict[str, Any]:
    chosen = runtime.context.tools()
    if not chosen:
        return {"messages": []}
    # Real graph: model.bind_tools(chosen).with_config(tags=["nostream"])
    selector = stand_in_selector(chosen).with_config(tags=["nostream"])
    return {"messages": [await selector.ainvoke(state["messages"])]}


async def run_tools(state: MessagesState, runtime: Runtime[Selection]) -> Any:
    return await ToolNode(runtime.context.tools()).ainvoke(state)


async def answer(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await answerer.ainvoke(state["messages"])]}


def after_select(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "answer"


builder = StateGraph(MessagesState, context_schema=Selection)
builder.add_node(select)
builder.add_node("tools", run_tools)
builder.add_node(answer)
builder.add_edge(START, "select")
builder.add_conditional_edges("select", after_select, ["tools", "answer"])
builder.add_edge("tools", "answer")
builder.add_edge("answer", END)

app = FastAPI()
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "assistant": GraphConfig(
                graph=builder.compile(),
                description="Searches the web and counts words when asked to.",
                server_tools=["web_search", "word_count"],
                context_factory=selection,
            )
        }
    ),
    app=app,
).bind_openai_api()
