"""Background Responses: submit, execute in a worker, retrieve, cancel.

The executor runs a stored job exactly like a foreground streaming request
(the same ``open_run`` and encoder) and records every stream event, so a
client can poll the snapshot or replay the stream from any sequence number.
A run that raises ends ``failed``; a cancelled one ends ``cancelled``.

A run stopped by its worker's shutdown is handed back and runs again later;
so is one whose worker died. With a backend checkpointer (PostgreSQL) runs
are durable: a re-run resumes after the last node an earlier attempt
completed (``graph/durable.py``). A re-run's events follow the stored ones
(sequence numbers go on), beginning with a new ``response.in_progress``
whose output is empty, and its items take the output indexes from 0 again.
After ``max_attempts`` runs lost with their workers the Response fails.

Interrupt runs are checked at submit, under the run's lease: a busy run or
answers that do not match the pause are refused there (409), and a run that
already has a Response queued or running refuses another.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from langgraph_openai_serve.background.protocol import (
    TERMINAL_STATUSES,
    BackgroundJob,
    Executor,
    ResponseStore,
)
from langgraph_openai_serve.background.recording import RecordingEncoder
from langgraph_openai_serve.conversations.turns import add_turn
from langgraph_openai_serve.graph.durable import durable_thread_id
from langgraph_openai_serve.graph.errors import InvalidRequestError, RunBusyError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.interrupts import discard_run
from langgraph_openai_serve.graph.runner import PreparedRun, run_graph
from langgraph_openai_serve.observability.runs import RunWatch
from langgraph_openai_serve.openai.errors import INTERNAL_ERROR_MESSAGE
from langgraph_openai_serve.openai.responses.encode import event_frame, stream_frames
from langgraph_openai_serve.openai.responses.interrupt_ids import paused_response_id
from langgraph_openai_serve.openai.responses.interrupt_runs import interrupt_run_id
from langgraph_openai_serve.openai.responses.items import ResponseShell, new_id
from langgraph_openai_serve.openai.responses.runs import OpenRun, decode, open_run
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import BackgroundRuntime, ServeState
from langgraph_openai_serve.openai.stream_failure import StreamFailure, refusal_failure

logger = logging.getLogger("langgraph_openai_serve")

LEASE_WAIT_SECONDS = 10.0
"""How long a worker waits for an interrupt run's lease before failing it."""


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


async def submit(
    state: ServeState,
    runtime: BackgroundRuntime,
    body: ResponseCreateRequest,
    *,
    scope: str,
    idempotency_key: str | None,
    input_items: list[dict[str, Any]] | None = None,
    continues: str | None = None,
    reservation: Reservation | None = None,
) -> dict[str, Any]:
    """Validate, then store the queued Response and enqueue its job at once.

    A retry with a known ``Idempotency-Key`` returns the original Response,
    and queues its job again if it went missing. With a response store,
    ``input_items`` are the items the request carried and ``continues`` the
    kept Response ``body`` continues (``body`` then holds the whole chain).
    ``reservation``: the ids chosen for it beforehand (``reserve``).
    """
    config = state.registry.get_graph(body.model)
    decode(body, config)  # reject bad input before queueing
    await runtime.ensure_started(executor_for(state, runtime))
    kept = _Kept(
        state.responses is not None,
        input_items,
        continues,
        state.observer.trace_carrier(),
    )
    # An interrupt run is chosen now, so the Response id can name it for
    # resumes; its lease is held while the resume is checked and the
    # Response stored.
    reserved = reservation or reserve(state, body, scope)
    if reserved.run is None:
        return await _store(
            runtime, body, reserved.response_id, None, scope, idempotency_key, kept
        )
    opened = await open_run(
        state,
        config,
        body,
        scope=scope,
        response_id=reserved.response_id,
        run_id=reserved.run,
    )
    try:
        return await _store(
            runtime,
            body,
            reserved.response_id,
            reserved.run.hex,
            scope,
            idempotency_key,
            kept,
        )
    finally:
        assert opened.lease is not None
        await opened.lease.release()


async def _store(
    runtime: BackgroundRuntime,
    body: ResponseCreateRequest,
    response_id: str,
    run_id: str | None,
    scope: str,
    idempotency_key: str | None,
    kept: _Kept,
) -> dict[str, Any]:
    job = BackgroundJob(
        response_id=response_id,
        scope=scope,
        body=body.model_dump(mode="json", exclude_unset=True, by_alias=True),
        run_id=run_id,
        trace=kept.trace,
    )
    shell = ResponseShell.for_request(
        body,
        response_id=response_id,
        background=True,
        store=kept.store,
        previous_response_id=kept.continues,
    )
    backend = runtime.backend

    async def enqueue(transaction: Any) -> None:
        await backend.submit(job, transaction)

    # A backend outside the store's transaction (this process's tasks) gets
    # the job once it is stored: a task started inside a PostgreSQL
    # transaction would look for its Response before the commit.
    transactional = getattr(backend, "transactional", True)
    snapshot, created = await runtime.store.create(
        job,
        shell.body("queued", []),
        idempotency_key=idempotency_key,
        body_digest=body_digest(body) if idempotency_key else None,
        enqueue=enqueue if transactional else None,
        input_items=kept.input_items,
    )
    if created and not transactional:
        await backend.submit(job)
    if not created and snapshot.get("status") not in TERMINAL_STATUSES:
        original = await runtime.store.job(snapshot["id"])
        if original is not None:
            await backend.resubmit_if_missing(original)
    return snapshot


@dataclass(frozen=True, slots=True)
class _Kept:
    """What a response store keeps of a background Response beyond its job."""

    store: bool
    input_items: list[dict[str, Any]] | None
    continues: str | None
    trace: dict[str, str] | None
    """The submitting request's trace context (tracing on)."""


def executor_for(state: ServeState, runtime: BackgroundRuntime) -> Executor:
    """What the backend calls to run one queued job of this server."""

    async def execute(response_id: str) -> None:
        await _execute(state, runtime, response_id)

    return execute


async def _execute(
    state: ServeState, runtime: BackgroundRuntime, response_id: str
) -> None:
    store = runtime.store
    attempt = await store.start_attempt(response_id)
    current, job = attempt.snapshot, attempt.job
    if current is None or job is None or current.get("status") in TERMINAL_STATUSES:
        return  # gone, ended while queued (cancelled), or a duplicate delivery
    # The shell stored at submit is the one every snapshot of the job shows.
    shell = ResponseShell.of_snapshot(current)
    if attempt.cancel_requested:
        await end(runtime, job, shell.body("cancelled", []))
        return
    observer = state.observer
    observer.queue_waited(shell.model, attempt.waited)
    watch = observer.run(
        shell.model,
        "responses",
        "background",
        response_id=job.response_id,
        conversation=shell.conversation,
        trace_carrier=job.trace,
        finish_on_cut=False,  # a stop hands the run back: _stopped decides
    )
    if attempt.lost >= runtime.max_attempts:
        logger.error(
            "background.run_abandoned response=%s lost=%d",
            job.response_id,
            attempt.lost,
        )
        watch.start()
        watch.finish("failed", error="lost_workers")
        await end(
            runtime, job, shell.body("failed", [], error=_lost_error(attempt.lost))
        )
        return
    encoder = RecordingEncoder(shell, after=attempt.last_sequence)
    # The stream's first events go with the in_progress status, so followers
    # see the run start as soon as a worker took it, not once its graph is
    # prepared (a durable run reads its checkpoints first).
    encoder.start()
    running = shell.body("in_progress", [])
    if not await store.set_snapshot(job.response_id, running, events=encoder.take()):
        return  # cancelled a moment ago
    terminal: dict[str, Any] | None = None
    run: PreparedRun | None = None
    watch.start()
    try:
        body = ResponseCreateRequest.model_validate(job.body)
        config = state.registry.get_graph(body.model)
        encoder.interrupt_protocol = config.interrupt_protocol
        opened = await _open_when_free(state, runtime, body, job, watch.callbacks)
        run = opened.run
        try:
            events = run_graph(run, stream=True, statuses=True)
            async for _ in stream_frames(events, encoder, watch=watch):
                if encoder.terminal is None and encoder.pending:
                    # The end is stored with its status.
                    await store.append_events(job.response_id, encoder.take())
            terminal = encoder.terminal
        finally:
            if opened.lease is not None:
                await opened.lease.release()
    except asyncio.CancelledError:
        stopped = _stopped(state, runtime, job, shell, encoder, run, watch)
        await asyncio.shield(stopped)
        raise
    except Exception as exc:
        watch.finish("failed", error=exc)
        terminal = _failed(job.response_id, encoder, exc)
    if terminal is None:  # pragma: no cover - the encoder always ends a stream
        terminal = shell.body("failed", encoder.output, error=_server_error())
    # The turn goes in first, then the end's events with the terminal status
    # (which frees the Conversation): a client that sees the Response end,
    # polling or following the stream, finds the turn in the Conversation
    # and can send the next one.
    await _add_to_conversation(state, store, job, shell, terminal)
    await end(runtime, job, terminal, encoder.take())
    await _discard_checkpoints(run)


def _failed(
    response_id: str, encoder: RecordingEncoder, exc: Exception
) -> dict[str, Any]:
    """End a run that raised outside its graph's stream: a refusal (a resume
    that lost its race to another after submit) with its own code and
    message, anything else as a server error. The failure's events wait in
    the encoder, for followers of the stream."""
    failure = refusal_failure(exc)
    if failure is not None:
        logger.warning(
            "background.run_refused response=%s code=%s", response_id, failure.code
        )
    else:
        logger.exception("background.run_failed response=%s", response_id)
        message = (
            str(exc) if isinstance(exc, InvalidRequestError) else INTERNAL_ERROR_MESSAGE
        )
        failure = StreamFailure("server_error", message)
    if encoder.terminal is not None:  # pragma: no cover - nothing raises after the end
        encoder.take()
        error = {"code": failure.code, "message": failure.message}
        return encoder.shell.body("failed", encoder.output, error=error)
    encoder.fail(failure)
    assert encoder.terminal is not None
    return encoder.terminal


async def end(
    runtime: BackgroundRuntime,
    job: BackgroundJob,
    terminal: dict[str, Any],
    events: list[dict[str, Any]] | None = None,
) -> bool:
    """Store the terminal snapshot with the stream's last ``events`` and, in
    the same transaction, queue its ``response.<status>`` event (webhooks);
    whether it was the end."""
    status = terminal.get("status")

    async def announce(transaction: Any) -> None:
        await runtime.announce(
            transaction, f"response.{status}", job.response_id, job.scope
        )

    return await runtime.store.set_snapshot(
        job.response_id, terminal, enqueue=announce, events=events
    )


async def _add_to_conversation(
    state: ServeState,
    store: ResponseStore,
    job: BackgroundJob,
    shell: ResponseShell,
    terminal: dict[str, Any],
) -> None:
    """A Response created with ``conversation`` adds its turn once it ends."""
    if shell.conversation is None:
        return
    if state.conversations is None:
        logger.error(
            "background.conversation_lost response=%s conversation=%s: this "
            "worker keeps no conversations (set LGOS_RESPONSE_STORE as the API "
            "does)",
            job.response_id,
            shell.conversation,
        )
        return
    items = await store.input_items(job.response_id, job.scope) or []
    await add_turn(
        state.conversations,
        shell.conversation,
        job.scope,
        items,
        terminal,
        holder=job.response_id,
    )


async def _discard_checkpoints(run: PreparedRun | None) -> None:
    """A durable run's checkpoints serve only its re-runs: once its Response
    is terminal they go (after the terminal snapshot is stored, so a worker
    lost in between still finds them)."""
    if run is not None and run.durable is not None:
        await discard_run(run.graph, run.durable.thread_id)


async def _open_when_free(
    state: ServeState,
    runtime: BackgroundRuntime,
    body: ResponseCreateRequest,
    job: BackgroundJob,
    callbacks: tuple[Any, ...] = (),
) -> OpenRun:
    """``open_run``, waiting out a lease held by a submit checking a resume of
    the same run (milliseconds) rather than failing the run.

    With a backend checkpointer (PostgreSQL) the run is durable: it resumes
    after the last node an earlier attempt completed."""
    config = state.registry.get_graph(body.model)
    checkpointer = runtime.checkpointer()
    durable_thread = (
        durable_thread_id(job.scope, body.model, job.response_id)
        if checkpointer is not None
        else None
    )
    deadline = time.monotonic() + LEASE_WAIT_SECONDS
    while True:
        try:
            return await open_run(
                state,
                config,
                body,
                scope=job.scope,
                response_id=job.response_id,
                run_id=uuid.UUID(hex=job.run_id) if job.run_id else None,
                durable_thread=durable_thread,
                checkpointer=checkpointer,
                callbacks=callbacks,
            )
        except RunBusyError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def _stopped(
    state: ServeState,
    runtime: BackgroundRuntime,
    job: BackgroundJob,
    shell: ResponseShell,
    encoder: Any,
    run: PreparedRun | None,
    watch: RunWatch,
) -> None:
    """A cancelled run: the client's cancel ends it, a worker stop hands it
    back (keeping a durable run's checkpoints for its re-run)."""
    store = runtime.store
    if await store.cancel_requested(job.response_id):
        watch.finish("cancelled")
        await end(runtime, job, shell.body("cancelled", encoder.output))
        await _discard_checkpoints(run)
    else:
        watch.discard("handed_back")
        await store.hand_back(job.response_id)
        state.observer.rerun("handed_back")


def _lost_error(lost: int) -> dict[str, str]:
    return {
        "code": "server_error",
        "message": (
            f"The background run was interrupted {lost} times because the worker "
            "running it stopped responding; it will not be run again."
        ),
    }


def _server_error() -> dict[str, str]:
    return {"code": "server_error", "message": INTERNAL_ERROR_MESSAGE}


async def cancel(runtime: BackgroundRuntime, response_id: str) -> None:
    """Flag, stop a running job, and wait briefly for its terminal snapshot.

    When no live worker will see the flag (the job was still waiting, or its
    worker is gone), the Response ends ``cancelled`` here and now.
    """
    store = runtime.store
    if not await store.request_cancel(response_id):
        return  # already terminal: cancel is idempotent
    nobody_runs_it = await runtime.backend.cancel(response_id)
    job = await store.job(response_id)
    for _ in range(100):
        snapshot = await store.get(response_id, job.scope) if job else None
        if snapshot is None or snapshot.get("status") in TERMINAL_STATUSES:
            return
        if nobody_runs_it or snapshot.get("status") == "queued":
            assert job is not None
            await end(runtime, job, {**snapshot, "status": "cancelled"})
            return
        await asyncio.sleep(0.02)


async def replay(
    runtime: BackgroundRuntime, response_id: str, starting_after: int
) -> AsyncIterator[bytes]:
    """Stored stream events after ``starting_after``, then live ones."""
    async for stored in runtime.store.events(response_id, starting_after):
        yield event_frame(stored.event)
