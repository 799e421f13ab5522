"""A graph with registered server tools, and the local search service it uses.

- ``package_version``: a custom tool with a free-form string input.
- ``web_search``: an ordinary LangChain tool querying a SearXNG-compatible
  JSON endpoint (``SearchService``, started by the tests on loopback).
- ``internal_note``: a tool the graph always calls privately.

A private selection model (tagged ``nostream``) binds only the tools the
request selected; a ToolNode with only those tools runs them, in parallel
when the model asks for several; an answer node streams the reply and attaches
citations to the exact URLs the search returned.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.content import create_citation, create_text_block
from langchain_core.tools import tool
from langchain_openai import custom_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from langgraph_openai_serve import GraphRequest
from langgraph_openai_serve.graph.server_tools import tool_output
from langgraph_openai_serve.testing import ScriptedChatModel

CORPUS = [
    {
        "url": "https://docs.example/lgos",
        "title": "LGOS docs",
        "content": "LGOS serves LangGraph graphs behind the OpenAI API.",
    },
    {
        "url": "https://blog.example/graphs",
        "title": "Graphs blog",
        "content": "Graphs can call tools on the server.",
    },
]


class SearchService:
    """A SearXNG-compatible ``/search?q=...&format=json`` endpoint."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                params = parse_qs(url.query)
                query = params.get("q", [""])[0]
                service.queries.append(query)
                words = set(query.lower().split())
                results = [
                    item
                    for item in CORPUS
                    if words & set(item["content"].lower().split())
                ]
                body = json.dumps({"query": query, "results": results}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass(frozen=True)
class ToolContext:
    selected: tuple[str, ...]
    tool_choice: Any


def tool_context(request: GraphRequest, settings: Any) -> ToolContext:
    return ToolContext(selected=request.server_tools, tool_choice=request.tool_choice)


def build_server_tool_graph(search_url: str, *, leak_call: bool = False) -> Any:
    @custom_tool
    def package_version(package: str) -> str:
        """The installed version of a package."""
        return f"{package.strip()} 1.2.3"

    @tool(response_format="content_and_artifact")
    def web_search(query: str) -> tuple[str, list[dict[str, str]]]:
        """Search the web."""
        found = httpx.get(f"{search_url}/search", params={"q": query, "format": "json"})
        results = found.json()["results"]
        text = "\n".join(f"{r['title']}: {r['content']}" for r in results)
        return text or "no results", [
            {"url": r["url"], "title": r["title"]} for r in results
        ]

    @tool
    def internal_note(text: str) -> str:
        """A private bookkeeping tool the client never sees."""
        return "noted"

    tools = {"package_version": package_version, "web_search": web_search}

    def choose(messages: list[BaseMessage], context: ToolContext) -> AIMessage:
        if isinstance(messages[-1], ToolMessage) or not context.selected:
            return AIMessage(content="")
        question = next(
            m.text for m in reversed(messages) if isinstance(m, HumanMessage)
        )
        calls = []
        words = question.lower()
        if "package_version" in context.selected and "version" in words:
            calls.append(
                {
                    "id": f"call_v{len(messages)}",
                    "name": "package_version",
                    "args": {"__arg1": "langgraph"},
                }
            )
        if "web_search" in context.selected and (
            "search" in words or context.tool_choice == "required"
        ):
            calls.append(
                {
                    "id": f"ws_{len(messages)}",
                    "name": "web_search",
                    "args": {"query": "graphs tools"},
                }
            )
        calls.append(
            {
                "id": f"note_{len(messages)}",
                "name": "internal_note",
                "args": {"text": "x"},
            }
        )
        return AIMessage(content="Let me check that privately.", tool_calls=calls)

    def answer_text(messages: list[BaseMessage]) -> str:
        results = [
            m
            for m in messages
            if isinstance(m, ToolMessage) and m.name != "internal_note"
        ]
        if not results:
            return "No tools were needed."
        return "Results: " + " | ".join(tool_output(m) for m in results)

    async def select(
        state: MessagesState, runtime: Runtime[ToolContext]
    ) -> dict[str, list[BaseMessage]]:
        model = ScriptedChatModel(responder=lambda m: choose(m, runtime.context))
        model = model.bind_tools([tools[name] for name in runtime.context.selected])
        reply = await model.with_config(tags=["nostream"]).ainvoke(state["messages"])
        return {"messages": [reply]}

    async def run_tools(
        state: MessagesState, runtime: Runtime[ToolContext]
    ) -> dict[str, Any]:
        node = ToolNode(
            [*[tools[name] for name in runtime.context.selected], internal_note]
        )
        return await node.ainvoke(state)

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        model = ScriptedChatModel(responder=answer_text)
        reply = await model.ainvoke(state["messages"])
        sources = [
            source
            for m in state["messages"]
            if isinstance(m, ToolMessage) and m.name == "web_search"
            for source in (m.artifact or ())
        ]
        if not sources:
            return {"messages": [reply]}
        text = reply.text
        citations = [
            create_citation(
                url=s["url"],
                title=s["title"],
                start_index=0,
                end_index=len("Results") - 1,
            )
            for s in sources
        ]
        return {
            "messages": [
                AIMessage(
                    content=[create_text_block(text=text, annotations=citations)],
                    id=reply.id,
                )
            ]
        }

    async def forget_tools(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage(content="I skipped the tools.")]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return "forget" if leak_call else "tools"
        return "answer"

    builder = StateGraph(MessagesState, context_schema=ToolContext)
    builder.add_node("select", select)
    builder.add_node("tools", run_tools)
    builder.add_node("answer", answer)
    builder.add_node("forget", forget_tools)
    builder.add_edge(START, "select")
    builder.add_conditional_edges("select", route, ["tools", "answer", "forget"])
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    builder.add_edge("forget", END)
    return builder.compile()
