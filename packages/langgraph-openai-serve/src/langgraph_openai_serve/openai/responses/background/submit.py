"""Submitting a background Response: reserve its ids, store it queued, queue
its job, both or neither.

Interrupt runs are checked at submit, under the run's lease: a busy run or
answers that do not match the pause are refused there (409), and a run that
already has a Response of the scope queued or running refuses another (the
store keeps one per scope and run, atomically: ``ResponseStore.create``).
A retry with a known ``Idempotency-Key`` returns the original Response, and
queues its job again if it went missing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.openai.responses.background.task import (
    TASK_NAME,
    response_job,
)
from langgraph_openai_serve.openai.responses.interrupt_ids import paused_response_id
from langgraph_openai_serve.openai.responses.interrupt_runs import interrupt_run_id
from langgraph_openai_serve.openai.responses.items import ResponseShell, new_id
from langgraph_openai_serve.openai.responses.runs import decode, open_run
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import ServeState
from langgraph_openai_serve.responses.protocol import TERMINAL_STATUSES, BackgroundJob
from langgraph_openai_serve.responses.runtime import BackgroundRuntime

logger = logging.getLogger("langgraph_openai_serve")


def check_idempotency_key(value: str | None) -> str | None:
    if value is not None and not 1 <= len(value) <= 255:
        raise InvalidRequestError(
            "Idempotency-Key must be 1 to 255 characters.", param="Idempotency-Key"
        )
    return value


def body_digest(body: ResponseCreateRequest) -> str:
    canonical = json.dumps(
        body.model_dump(mode="json", exclude_unset=True, by_alias=True),
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Reservation:
    """The id a background Response will be stored under, chosen before it
    is submitted (its Conversation turn is claimed in that name)."""

    response_id: str
    run: uuid.UUID | None = None
    """The interrupt run it drives (interrupt graphs): the Response id names
    it, so a resume can find it."""


def reserve(state: ServeState, body: ResponseCreateRequest, scope: str) -> Reservation:
    """The ids of the background Response ``body`` would create.

    Raises:
        InvalidRequestError / PausedRunNotFoundError: a bad run id
            (``metadata.lgos_run_id``) or a foreign ``previous_response_id``.
    """
    config = state.registry.get_graph(body.model)
    if not config.supports(GraphFeature.INTERRUPTS):
        return Reservation(new_id("resp"))
    run = interrupt_run_id(
        scope, body.model, body.metadata or {}, body.previous_response_id
    )
    return Reservation(paused_response_id(scope, body.model, run), run)


@dataclass(frozen=True, slots=True)
class Kept:
    """What a response store keeps of a background Response beyond its job."""

    input_items: list[dict[str, Any]] | None = None
    """The items its request carried (a response store is on)."""
    continues: str | None = None
    """The kept Response ``body`` continues (``body`` then holds the chain)."""


async def submit(
    state: ServeState,
    runtime: BackgroundRuntime,
    body: ResponseCreateRequest,
    reservation: Reservation,
    *,
    scope: str,
    idempotency_key: str | None,
    kept: Kept,
) -> dict[str, Any]:
    """Validate, then store the queued Response and queue its job at once;
    the stored snapshot (an Idempotency-Key's original when it is known)."""
    config = state.registry.get_graph(body.model)
    decode(body, config)  # reject bad input before queueing
    if reservation.run is None:
        return await _store(
            state, runtime, body, reservation, scope, idempotency_key, kept
        )
    # An interrupt run's lease is held while the resume is checked and the
    # Response stored.
    opened = await open_run(
        state,
        config,
        body,
        scope=scope,
        response_id=reservation.response_id,
        run_id=reservation.run,
    )
    try:
        return await _store(
            state, runtime, body, reservation, scope, idempotency_key, kept
        )
    finally:
        assert opened.lease is not None
        await opened.lease.release()


async def _store(
    state: ServeState,
    runtime: BackgroundRuntime,
    body: ResponseCreateRequest,
    reservation: Reservation,
    scope: str,
    idempotency_key: str | None,
    kept: Kept,
) -> dict[str, Any]:
    response_id = reservation.response_id
    job = BackgroundJob(
        response_id=response_id,
        scope=scope,
        body=body.model_dump(mode="json", exclude_unset=True, by_alias=True),
        run_id=reservation.run.hex if reservation.run else None,
        trace=state.observer.trace_carrier(),
    )
    shell = ResponseShell.for_request(
        body,
        response_id=response_id,
        background=True,
        store=state.responses is not None,
        previous_response_id=kept.continues,
    )
    jobs = runtime.jobs
    queued = response_job(response_id, scope, first=True)

    async def enqueue(transaction: Any) -> None:
        await jobs.defer([queued], transaction)

    # A queue outside the store's transaction (this process's tasks) gets
    # the job once it is stored: a task started inside a PostgreSQL
    # transaction would look for its Response before the commit.
    snapshot, created = await runtime.store.create(
        job,
        shell.body("queued", []),
        idempotency_key=idempotency_key,
        body_digest=body_digest(body) if idempotency_key else None,
        enqueue=enqueue if jobs.transactional else None,
        input_items=kept.input_items,
        most_unfinished=state.gate.limits.of(scope).background,
    )
    if created and not jobs.transactional:
        await jobs.defer([queued])
    if not created and snapshot.get("status") not in TERMINAL_STATUSES:
        await _requeue_if_missing(runtime, snapshot["id"], scope)
    return snapshot


async def _requeue_if_missing(
    runtime: BackgroundRuntime, response_id: str, scope: str
) -> None:
    """The original of a retried submit runs unless its job went missing."""
    if await runtime.jobs.live(TASK_NAME, response_id):
        return
    if await runtime.jobs.defer([response_job(response_id, scope)]):
        logger.warning("background.requeued_missing_job response=%s", response_id)
