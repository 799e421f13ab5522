"""``interrupts``: a refund approval that pauses for a human decision.

Demonstrates human-in-the-loop interrupts: the ``review`` node calls
``interrupt()`` with a question, two choices and ``allow_other``, so the
Response completes with an ``lgos_interrupt`` function call carrying that
payload. The client resumes with ``previous_response_id`` and a
``function_call_output`` (``approve``, ``reject`` or any other text); the
``answer`` node then tells the customer through the model.

With a database the checkpoints live in PostgreSQL (``AsyncPostgresSaver``
on a shared pool) and ``PostgresRunCoordinator`` leases runs across
processes; the graph factory opens the pool at startup. Without one both
stay in this process's memory.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.types import interrupt

from lgos_demos.database import Pool
from lgos_demos.graphs.answering import last_user_text

CHOICES = ["approve", "reject"]


class RefundState(MessagesState):
    decision: str


def refund_question(request: str) -> dict[str, Any]:
    """The interrupt payload a client shows to its reviewer."""
    return {
        "question": f"How should this refund request be handled? “{request}”",
        "choices": CHOICES,
        "allow_other": True,
    }


def decision_instructions(decision: str) -> str:
    cleaned = decision.strip()
    if cleaned.lower() == "approve":
        verdict = "The refund was approved: confirm it to the customer."
    elif cleaned.lower() == "reject":
        verdict = "The refund was rejected: explain it politely to the customer."
    else:
        verdict = f"The reviewer answered “{cleaned}”: pass that on to the customer."
    return f"Reviewer decision: {cleaned}. {verdict}"


def build_interrupts_graph(
    model: BaseChatModel, checkpointer: BaseCheckpointSaver[Any]
) -> Pregel[Any, Any, Any, Any]:
    async def review(state: RefundState) -> dict[str, Any]:
        # Runs again from the start on resume: keep it free of side effects.
        answer = interrupt(refund_question(last_user_text(state["messages"])))
        return {"decision": str(answer)}

    async def answer(state: RefundState) -> dict[str, list[BaseMessage]]:
        prompt = SystemMessage(content=decision_instructions(state["decision"]))
        return {"messages": [await model.ainvoke([prompt, *state["messages"]])]}

    builder = StateGraph(RefundState)
    builder.add_node("review", review)
    builder.add_node("answer", answer)
    builder.add_edge(START, "review")
    builder.add_edge("review", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="interrupts", checkpointer=checkpointer)


class PostgresInterruptsGraph:
    """The graph factory on PostgreSQL: opens the pool once, at startup."""

    def __init__(self, model: BaseChatModel, pool: Pool) -> None:
        self.model = model
        self.pool = pool

    async def __call__(self) -> Pregel[Any, Any, Any, Any]:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        await self.pool.open(wait=True)
        return build_interrupts_graph(self.model, AsyncPostgresSaver(self.pool))

    async def close(self) -> None:
        await self.pool.close()
