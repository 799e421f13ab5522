"""Interrupt runs: identities on the wire and the checkpoint they address.

A paused run's Response id is ``resp_lg_<run uuid hex>_<scope tag><nonce>``:
it embeds the run UUID (the rest of the checkpoint key comes from the
server-trusted scope and the model), a 16-hex tag of the scope so a request
from another scope is told "not found" rather than "conflict", and a nonce so
every pause has its own id. Each pending interrupt becomes a function call
named ``lgos_interrupt`` whose call id is ``call_lg_<native interrupt id>``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage

from langgraph_openai_serve.graph.answer import Answer, ToolCall
from langgraph_openai_serve.graph.errors import (
    GraphError,
    InterruptStateConflictError,
    InvalidRequestError,
    PausedRunNotFoundError,
)

logger = logging.getLogger("langgraph_openai_serve")

INTERRUPT_TOOL_NAME = "lgos_interrupt"
RUN_ID_METADATA_KEY = "lgos_run_id"
CLEANUP_TIMEOUT = 10.0

_RESPONSE_ID = re.compile(r"resp_lg_([0-9a-f]{32})_([0-9a-f]{16})[0-9a-f]{16}")
_CALL_PREFIX = "call_lg_"


@dataclass(frozen=True, slots=True)
class PendingInterrupt:
    """One ``interrupt()`` waiting for an answer in the checkpoint."""

    id: str
    value: Any
    task_id: str

    @property
    def call_id(self) -> str:
        return _CALL_PREFIX + self.id


def _scope_tag(scope: str, model: str) -> str:
    digest = hashlib.sha256(b"lgos.response-scope.v1\x00")
    for part in (scope, model):
        data = part.encode()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:16]


def paused_response_id(scope: str, model: str, run_id: uuid.UUID) -> str:
    """A fresh Response id for a response of interrupt run ``run_id``."""
    return f"resp_lg_{run_id.hex}_{_scope_tag(scope, model)}{secrets.token_hex(8)}"


def run_id_from_response_id(response_id: str, scope: str, model: str) -> uuid.UUID:
    """The run a ``previous_response_id`` names, checked against the scope.

    Raises:
        InvalidRequestError: not an LGOS paused-response id.
        PausedRunNotFoundError: it belongs to another scope or model.
    """
    match = _RESPONSE_ID.fullmatch(response_id)
    if match is None:
        raise InvalidRequestError(
            "previous_response_id is not the id of a paused LGOS response.",
            param="previous_response_id",
        )
    if match.group(2) != _scope_tag(scope, model):
        raise PausedRunNotFoundError(response_id)
    return uuid.UUID(hex=match.group(1))


def run_id_from_metadata(metadata: Mapping[str, str]) -> uuid.UUID:
    """``metadata.lgos_run_id`` (retry-safe initial requests) or a new UUID."""
    value = metadata.get(RUN_ID_METADATA_KEY)
    if value is None:
        return uuid.uuid4()
    try:
        run_id = uuid.UUID(value)
    except ValueError:
        run_id = uuid.UUID(int=0)
    if run_id.int == 0:
        raise InvalidRequestError(
            "metadata.lgos_run_id must be a non-nil UUID.",
            param=f"metadata.{RUN_ID_METADATA_KEY}",
        )
    return run_id


def interrupt_id_from_call_id(call_id: str) -> str | None:
    """The native interrupt id a ``call_lg_`` call id carries, or ``None``."""
    if call_id.startswith(_CALL_PREFIX) and len(call_id) > len(_CALL_PREFIX):
        return call_id[len(_CALL_PREFIX) :]
    return None


def pending_interrupts(state: Any) -> tuple[PendingInterrupt, ...]:
    """The unanswered interrupts of a LangGraph ``StateSnapshot``."""
    pending: list[PendingInterrupt] = []
    for task in state.tasks:
        pending.extend(
            PendingInterrupt(interrupt.id, interrupt.value, task.id)
            for interrupt in task.interrupts
        )
    return tuple(pending)


def resume_map(
    pending: tuple[PendingInterrupt, ...], answers: Mapping[str, str]
) -> dict[str, str]:
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
    expected = {interrupt.id for interrupt in pending}
    if set(answers) != expected:
        raise InterruptStateConflictError(
            "The function_call_output items must answer exactly the pending "
            f"interrupt batch ({len(expected)} call(s))."
        )
    return dict(answers)


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
    resume: Mapping[str, str] | None = None
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
    graph: Any, thread_id: str, answers: Mapping[str, str] | None
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
        raise InterruptStateConflictError(
            "metadata.lgos_run_id names a run that is already in progress."
        )
    return InterruptPlan(thread_id)


def pause_answer(interrupts: tuple[PendingInterrupt, ...], text: str) -> Answer:
    """The answer a pause returns: any streamed text, then one
    ``lgos_interrupt`` call per pending interrupt with its JSON payload."""
    calls = []
    for interrupt in interrupts:
        try:
            arguments = json.dumps(interrupt.value)
        except (TypeError, ValueError) as exc:
            raise GraphError(f"An interrupt payload is not JSON: {exc}") from exc
        calls.append(ToolCall(interrupt.call_id, INTERRUPT_TOOL_NAME, arguments))
    return Answer(
        message=AIMessage(content=text),
        text=text,
        refusal=None,
        citations=(),
        tool_calls=tuple(calls),
        truncated_calls=(),
        stop="complete",
    )
