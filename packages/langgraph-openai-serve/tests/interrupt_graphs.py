"""Interrupt-enabled graphs for the tests (a refund approval, in variants)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve.testing import ScriptedChatModel

QUESTION = {
    "question": "How should the refund be handled?",
    "choices": ["approve", "reject"],
    "allow_other": True,
}


class Decision(MessagesState):
    decision: str
    second: str


def refund_graph(checkpointer: Any, runs: Counter[str]) -> Any:
    """ask (interrupts) -> answer (streams "Refund <decision>.")."""
    model = ScriptedChatModel(responder=lambda messages: f"Refund {messages[-1].text}.")

    async def ask(state: Decision) -> dict[str, Any]:
        runs["ask"] += 1
        return {"decision": interrupt(QUESTION)}

    async def answer(state: Decision) -> dict[str, list[BaseMessage]]:
        runs["answer"] += 1
        reply = await model.ainvoke([AIMessage(content=state["decision"])])
        return {"messages": [reply]}

    builder = StateGraph(Decision)
    builder.add_node("ask", ask)
    builder.add_node("answer", answer)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def double_interrupt_graph(checkpointer: Any) -> Any:
    """A node that calls interrupt() twice in one invocation (not allowed)."""

    async def greedy(state: Decision) -> dict[str, Any]:
        first = interrupt({"question": "first?"})
        second = interrupt({"question": "second?"})
        return {"messages": [AIMessage(content=f"{first} {second}")]}

    builder = StateGraph(Decision)
    builder.add_node("greedy", greedy)
    builder.add_edge(START, "greedy")
    builder.add_edge("greedy", END)
    return builder.compile(checkpointer=checkpointer)


def failing_graph(checkpointer: Any) -> Any:
    async def broken(state: Decision) -> dict[str, Any]:
        raise RuntimeError("boom before any pause")

    builder = StateGraph(Decision)
    builder.add_node("broken", broken)
    builder.add_edge(START, "broken")
    builder.add_edge("broken", END)
    return builder.compile(checkpointer=checkpointer)


REFUND = {"action": "refund", "order": 7, "amount": "19.90 EUR"}


def approval_graph(checkpointer: Any, runs: Counter[str]) -> Any:
    """``refund`` asks for approval of REFUND, then reports what it did."""

    async def refund(state: Decision) -> dict[str, Any]:
        runs["refund"] += 1
        approved = interrupt(REFUND)
        return {"decision": json.dumps(approved, sort_keys=True)}

    async def report(state: Decision) -> dict[str, list[BaseMessage]]:
        runs["report"] += 1
        done = json.loads(state["decision"])
        text = f"Refunded order {done['order']} ({done['amount']})."
        return {"messages": [AIMessage(content=text)]}

    builder = StateGraph(Decision)
    builder.add_node("refund", refund)
    builder.add_node("report", report)
    builder.add_edge(START, "refund")
    builder.add_edge("refund", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer)
