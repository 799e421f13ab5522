"""Interrupt runs in LangGraph terms: the pending batch of a checkpoint
thread, the answers that resume it, and the thread's clean-up.

How a pause is named and shown to a client (Response ids, call ids, the
presented items) belongs to the protocol surface (``openai/responses/``);
here an interrupt is its native id, value and task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve.graph.errors import (
    GraphError,
    InterruptStateConflictError,
)

logger = logging.getLogger("langgraph_openai_serve")

CLEANUP_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class PendingInterrupt:
    """One ``interrupt()`` waiting for an answer in the checkpoint."""

    id: str
    value: Any
    task_id: str
    node: str = ""
    """The node that called ``interrupt()``."""


class _ResumeWithValue:
    __slots__ = ()

    def __repr__(self) -> str:
        return "RESUME_WITH_VALUE"


RESUME_WITH_VALUE: Any = _ResumeWithValue()
"""An answer that resumes an interrupt with its own value: an approval that
carries no answer of its own."""


def pending_interrupts(state: Any) -> tuple[PendingInterrupt, ...]:
    """The unanswered interrupts of a LangGraph ``StateSnapshot``."""
    pending: list[PendingInterrupt] = []
    for task in state.tasks:
        pending.extend(
            PendingInterrupt(interrupt.id, interrupt.value, task.id, task.name)
            for interrupt in task.interrupts
        )
    return tuple(pending)


def resume_map(
    pending: tuple[PendingInterrupt, ...], answers: Mapping[str, Any]
) -> dict[str, Any]:
    """Check the answers cover exactly the pending batch; map id -> answer.

    Raises:
        InterruptStateConflictError: no pause, or answers that are missing,
            stale or for other interrupts.
    """
    if not pending:
        raise InterruptStateConflictError(
            "The run has no pending interrupts: it completed, expired or was "
            "already resumed."
        )
    expected = {interrupt.id: interrupt.value for interrupt in pending}
    if set(answers) != set(expected):
        raise InterruptStateConflictError(
            "The answers must cover exactly the pending interrupt batch "
            f"({len(expected)} interrupt(s))."
        )
    return {
        key: expected[key] if answer is RESUME_WITH_VALUE else answer
        for key, answer in answers.items()
    }


async def discard_run(graph: Any, thread_id: str) -> None:
    """Delete a run's checkpoint thread; failures are logged, never raised."""
    checkpointer = graph.checkpointer
    try:
        await asyncio.wait_for(checkpointer.adelete_thread(thread_id), CLEANUP_TIMEOUT)
    except Exception:
        logger.warning("interrupt.cleanup_failed thread=%s", thread_id, exc_info=True)


@dataclass(frozen=True, slots=True)
class InterruptPlan:
    """How one request drives an interrupt run, decided under its lease."""

    thread_id: str
    resume: Mapping[str, Any] | None = None
    """Answers by native interrupt id; ``None`` for an initial request."""
    existing: tuple[PendingInterrupt, ...] = ()
    """A retried initial request finds its run already paused: re-send it."""
    resumed_tasks: frozenset[str] = frozenset()

    def check_new_batch(self, pending: tuple[PendingInterrupt, ...]) -> None:
        """Reject a node that reached a second ``interrupt()`` after resuming.

        Raises:
            GraphError: one resumed task paused again in the same invocation.
        """
        again = {p.task_id for p in pending} & self.resumed_tasks
        if again:
            raise GraphError(
                "A node called interrupt() a second time after being resumed; "
                "finish the node and interrupt again from another node invocation."
            )


async def plan_interrupt_run(
    graph: Any, thread_id: str, answers: Mapping[str, Any] | None
) -> InterruptPlan:
    """Read the run's checkpoint and decide: start, re-send, or resume.

    Raises:
        InterruptStateConflictError: the answers do not match the pending
            batch, or an initial request names a run that is not paused.
    """
    state = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    pending = pending_interrupts(state)
    if answers is not None:
        return InterruptPlan(
            thread_id,
            resume=resume_map(pending, answers),
            resumed_tasks=frozenset(p.task_id for p in pending),
        )
    if pending:
        return InterruptPlan(thread_id, existing=pending)
    if state.created_at is not None:
        raise InterruptStateConflictError("The requested run is already in progress.")
    return InterruptPlan(thread_id)


async def reject_interrupts(graph: Any, thread_id: str, rejected: Set[str]) -> None:
    """End a paused run whose client rejected pending interrupts: the graph
    does not run again and its checkpoint thread is deleted.

    Raises:
        InterruptStateConflictError: the run is not paused, or ``rejected``
            names interrupts that are not pending.
    """
    state = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    pending = {interrupt.id for interrupt in pending_interrupts(state)}
    if not pending:
        raise InterruptStateConflictError(
            "The run has no pending interrupts: it completed, expired or was "
            "already resumed."
        )
    if not rejected <= pending:
        raise InterruptStateConflictError(
            "A rejection names an interrupt that is not pending in this run."
        )
    await discard_run(graph, thread_id)
