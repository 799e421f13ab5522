"""``router``: a private planner call decides the route; only the answer streams.

Demonstrates answer-only streaming with LangGraph's ``nostream`` tag. The
``plan`` node asks the model for a ``RoutePlan`` as JSON (``response_format``
``json_schema``). Those JSON tokens stream from the model like any others,
but the call is tagged ``nostream``, so none reaches the client. ``docs``
questions are searched and answered with citations, anything else is
answered directly.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lgos_demos.graphs.answering import answer_from_sources, last_user_text, retrieve
from lgos_demos.search_client import SearchClient
from lgos_demos.sources import Source

PLANNER_INSTRUCTION = (
    "Decide how to answer the user's latest message. Route questions about "
    "this project and its documentation to docs, everything else to chat."
)


class RoutePlan(BaseModel):
    """The planner's decision."""

    model_config = ConfigDict(extra="forbid")  # strict JSON schema

    route: Literal["chat", "docs"] = Field(
        description=(
            "docs: questions about LGOS, LangGraph, graphs, models, the OpenAI "
            "API, Responses, Chat Completions, streaming, files, tools, search, "
            "citations, settings, setup, packages or services; "
            "chat: greetings, thanks and small talk"
        )
    )
    search_query: str = Field(description="Keywords to search the documentation with.")


class RouterState(MessagesState):
    route: str
    query: str
    sources: list[Source]


def build_router_graph(
    model: BaseChatModel, search: SearchClient
) -> Pregel[Any, Any, Any, Any]:
    schema = {
        "name": "RoutePlan",
        "schema": RoutePlan.model_json_schema(),
        "strict": True,
    }
    planner = model.bind(
        response_format={"type": "json_schema", "json_schema": schema}
    ).with_config(tags=["nostream"], run_name="planner")

    async def plan(state: RouterState) -> dict[str, Any]:
        question = last_user_text(state["messages"])
        reply = await planner.ainvoke(
            [SystemMessage(content=PLANNER_INSTRUCTION), HumanMessage(content=question)]
        )
        try:
            decision = RoutePlan.model_validate_json(reply.text)
        except ValidationError:  # a model that ignored the schema: search anyway
            decision = RoutePlan(route="docs", search_query=question)
        return {"route": decision.route, "query": decision.search_query or question}

    async def search_docs(state: RouterState) -> dict[str, Any]:
        return {"sources": await retrieve(search, state["query"])}

    async def answer(state: RouterState) -> dict[str, list[BaseMessage]]:
        if state.get("route") == "docs":
            sources = state.get("sources", [])
            return {
                "messages": [
                    await answer_from_sources(model, state["messages"], sources)
                ]
            }
        return {"messages": [await model.ainvoke(state["messages"])]}

    def after_plan(state: RouterState) -> str:
        return "retrieve" if state["route"] == "docs" else "answer"

    builder = StateGraph(RouterState)
    builder.add_node("plan", plan)
    builder.add_node("retrieve", search_docs)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", after_plan, ["retrieve", "answer"])
    builder.add_edge("retrieve", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="router")
