"""The graph shape behind ``server-tools`` and ``web-search``.

    select (private model call, only the selected tools bound)
      -> tools (a ToolNode holding only those tools; parallel calls run together)
      -> answer (streams; cites the exact URLs ``web_search`` returned)

The select call is tagged ``nostream`` so its text never reaches the client;
LGOS reports the selected calls and results as typed Responses items
(``custom_tool_call`` / ``web_search_call``). Chat Completions cannot select
server tools, so there the graph simply answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from langgraph_openai_serve import NamedFunctionToolChoice

from lgos_demos.graphs.answering import answer_from_sources
from lgos_demos.graphs.context import RequestContext
from lgos_demos.graphs.tools import WEB_SEARCH, sources_of
from lgos_demos.sources import Source, unique


def bound_choice(tool_choice: Any) -> str | None:
    """LangChain's ``tool_choice`` for the request's (``None`` means auto).

    A named choice of a selected custom tool binds that tool by name; a named
    client function is not among the server tools, so it leaves the choice
    to the model.
    """
    if tool_choice in ("required", "auto"):
        return str(tool_choice)
    if isinstance(tool_choice, NamedFunctionToolChoice):
        return None
    name = getattr(tool_choice, "name", None)
    return name if isinstance(name, str) else None


def turn_sources(messages: Sequence[BaseMessage]) -> list[Source]:
    """Sources ``web_search`` returned since the latest user message."""
    start = max(
        (i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=0
    )
    return unique(
        source
        for message in messages[start:]
        if isinstance(message, ToolMessage) and message.name == WEB_SEARCH
        for source in sources_of(message.artifact)
    )


def build_tool_agent(
    model: BaseChatModel, tools: Mapping[str, BaseTool], *, name: str
) -> Pregel[Any, Any, Any, Any]:
    def selected(context: RequestContext | None) -> list[BaseTool]:
        names = context.server_tools if context is not None else ()
        return [tools[n] for n in names if n in tools]

    async def select(
        state: MessagesState, runtime: Runtime[RequestContext]
    ) -> dict[str, list[BaseMessage]]:
        chosen = selected(runtime.context)
        if not chosen or runtime.context.tool_choice == "none":
            return {"messages": []}
        chooser = model.bind_tools(
            chosen, tool_choice=bound_choice(runtime.context.tool_choice)
        )
        reply = await chooser.with_config(tags=["nostream"]).ainvoke(state["messages"])
        # Without tool calls its text is dropped: the answer node streams instead.
        calls = isinstance(reply, AIMessage) and bool(reply.tool_calls)
        return {"messages": [reply] if calls else []}

    async def run_tools(
        state: MessagesState, runtime: Runtime[RequestContext]
    ) -> dict[str, Any]:
        result: dict[str, Any] = await ToolNode(selected(runtime.context)).ainvoke(
            state
        )
        return result

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        messages = state["messages"]
        sources = turn_sources(messages)
        if sources:
            return {"messages": [await answer_from_sources(model, messages, sources)]}
        return {"messages": [await model.ainvoke(messages)]}

    def after_select(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "answer"

    builder = StateGraph(MessagesState, context_schema=RequestContext)
    builder.add_node("select", select)
    builder.add_node("tools", run_tools)
    builder.add_node("answer", answer)
    builder.add_edge(START, "select")
    builder.add_conditional_edges("select", after_select, ["tools", "answer"])
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name=name)
