"""Graphs the suites share: the two-approver interrupt graph, one that
answers with the transcript it was given (kept-Responses and chaining tests
see which turns reached the graph), and ``whoami``, which answers with the
tenant it runs for (the identity tests see whom a gateway made the caller)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from langgraph_openai_serve import GraphConfig, GraphFeature, GraphRequest


class Approvals(MessagesState):
    decision: str
    second: str


def two_approvers_graph(
    checkpointer: Any,
    manager: dict[str, Any] | None = None,
    finance: dict[str, Any] | None = None,
) -> Any:
    """Two parallel nodes interrupt at once (``manager`` and ``finance`` are
    their interrupt values); one answer joins them: the final message is
    ``manager=<answer> finance=<answer>``."""
    manager_question = manager or {"question": "Manager approval?"}
    finance_question = finance or {"question": "Finance approval?"}

    async def ask_manager(state: Approvals) -> dict[str, Any]:
        return {"decision": interrupt(manager_question)}

    async def ask_finance(state: Approvals) -> dict[str, Any]:
        return {"second": interrupt(finance_question)}

    async def answer(state: Approvals) -> dict[str, list[BaseMessage]]:
        text = f"manager={state['decision']} finance={state['second']}"
        return {"messages": [AIMessage(content=text)]}

    builder = StateGraph(Approvals)
    builder.add_node("manager", ask_manager)
    builder.add_node("finance", ask_finance)
    builder.add_node("answer", answer)
    builder.add_edge(START, "manager")
    builder.add_edge(START, "finance")
    builder.add_edge(["manager", "finance"], "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def transcript(messages: Sequence[BaseMessage]) -> str:
    """``Saw human:Hi | ai:Hello | human:Again``: each message's type and text."""
    return "Saw " + " | ".join(f"{m.type}:{m.text}" for m in messages)


def transcript_graph() -> Any:
    """One node answering with the ``transcript`` of the messages it got."""

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [AIMessage(content=transcript(state["messages"]))]}

    return StateGraph(MessagesState).add_node(agent).add_edge(START, "agent").compile()


@dataclass(frozen=True)
class Caller:
    """The whoami graph's context: the scope LGOS ran the request for."""

    scope: str | None


def caller_context(request: GraphRequest, _settings: object) -> Caller:
    return Caller(scope=request.scope)


def whoami_graph() -> Any:
    """Answers ``scope=<the caller's scope>``."""

    async def answer(state: MessagesState, runtime: Runtime[Caller]) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"scope={runtime.context.scope}")]}

    builder = StateGraph(MessagesState, context_schema=Caller)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def whoami_config() -> GraphConfig:
    """The ``whoami`` graph as registered: background runs allowed."""
    return GraphConfig(
        graph=whoami_graph(),
        description="Answers with the tenant it runs for.",
        features={GraphFeature.BACKGROUND},
        context_factory=caller_context,
    )
