"""Running one background Response: the job's handler.

The run goes exactly like a foreground streaming request (the same
``open_run`` and encoder, the encoder's recording sink), and every stream
event is stored, so a client can poll the snapshot or replay the stream
from any sequence number. A run that raises ends ``failed``; a cancelled
one ends ``cancelled``.

A run stopped by its worker's shutdown is handed back and runs again later;
so is one whose worker died. With a backend checkpointer (PostgreSQL) runs
are durable: a re-run resumes after the last node an earlier attempt
completed (``graph/durable.py``). A re-run's events follow the stored ones
(sequence numbers go on), beginning with a new ``response.in_progress``
whose output is empty, and its items take the output indexes from 0 again.
After ``max_attempts`` runs lost with their workers the Response fails.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

from langgraph_openai_serve.conversations.turns import add_turn
from langgraph_openai_serve.error_envelope import INTERNAL_ERROR_MESSAGE
from langgraph_openai_serve.graph.config import InterruptProtocol
from langgraph_openai_serve.graph.durable import durable_thread_id
from langgraph_openai_serve.graph.errors import InvalidRequestError, RunBusyError
from langgraph_openai_serve.graph.interrupts import discard_run
from langgraph_openai_serve.graph.runner import PreparedRun, run_graph
from langgraph_openai_serve.observability.runs import RunWatch
from langgraph_openai_serve.openai.responses.background.recording import RecordingSink
from langgraph_openai_serve.openai.responses.encode import ResponseStreamEncoder
from langgraph_openai_serve.openai.responses.items import ResponseShell
from langgraph_openai_serve.openai.responses.runs import OpenRun, open_run
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.responses.stream import stream_frames
from langgraph_openai_serve.openai.state import ServeState
from langgraph_openai_serve.openai.stream_failure import (
    StreamFailure,
    refusal_failure,
)
from langgraph_openai_serve.operations.outages import database_fault
from langgraph_openai_serve.responses.protocol import (
    TERMINAL_STATUSES,
    Attempt,
    BackgroundJob,
    ResponseStore,
)
from langgraph_openai_serve.responses.runtime import BackgroundRuntime

logger = logging.getLogger("langgraph_openai_serve")

LEASE_WAIT_SECONDS = 10.0
"""How long a worker waits for an interrupt run's lease before failing it."""
HAND_BACK_PATIENCE = 120.0
"""Seconds a run a database fault stopped waits for the database to take its
hand-back."""


async def execute(state: ServeState, response_id: str) -> None:
    """Run the queued job of ``response_id`` (the task's handler), storing
    its events and its end; return when it ended, raise ``CancelledError``
    when its worker stops (the store then counts a hand-back).

    A database fault is not the run's fault: the run is handed back (once
    the database takes the hand-back) and the error raised, so the queue
    runs the job again (a durable run from its last checkpoint)."""
    runtime = state.background
    assert runtime is not None, "the server runs no background Responses"
    attempt = await runtime.store.start_attempt(response_id)
    try:
        await _run(state, runtime, attempt)
    except Exception as error:
        if database_fault(error) is None:
            raise
        logger.warning("background.database_fault response=%s: %s", response_id, error)
        await _hand_back_when_possible(runtime.store, response_id)
        state.observer.rerun("database")
        raise


async def _run(state: ServeState, runtime: BackgroundRuntime, attempt: Attempt) -> None:
    store = runtime.store
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
    recorded = RecordingSink()
    encoder = ResponseStreamEncoder(
        shell,
        _interrupt_protocol(state, shell.model),
        sink=recorded,
        sequence=attempt.last_sequence,
    )
    # The stream's first events go with the in_progress status, so followers
    # see the run start as soon as a worker took it, not once its graph is
    # prepared (a durable run reads its checkpoints first). A re-run goes on
    # after the stored events, with a new in_progress alone.
    if attempt.last_sequence >= 0:
        encoder.restart()
    else:
        encoder.start()
    running = shell.body("in_progress", [])
    if not await store.set_snapshot(job.response_id, running, events=recorded.take()):
        return  # cancelled a moment ago
    terminal: dict[str, Any] | None = None
    run: PreparedRun | None = None
    watch.start()
    try:
        body = ResponseCreateRequest.model_validate(job.body)
        opened = await _open_when_free(state, runtime, body, job, watch.callbacks)
        run = opened.run
        try:
            events = run_graph(run, stream=True, statuses=True)
            frames = stream_frames(
                events, encoder, watch=watch, opened=True, passes=database_fault
            )
            async for _ in frames:
                if encoder.terminal is None and recorded.pending:
                    # The end is stored with its status.
                    await store.append_events(job.response_id, recorded.take())
            terminal = encoder.terminal
        finally:
            if opened.lease is not None:
                await opened.lease.release()
    except asyncio.CancelledError:
        stopped = _stopped(state, runtime, job, shell, encoder, run, watch)
        await asyncio.shield(stopped)
        raise
    except Exception as exc:
        if database_fault(exc) is not None:
            watch.discard("handed_back")
            raise
        watch.finish("failed", error=exc)
        terminal = _failed(job.response_id, encoder, recorded, exc)
    if terminal is None:  # pragma: no cover - the encoder always ends a stream
        terminal = shell.body("failed", encoder.output, error=_server_error())
    # The turn goes in first, then the end's events with the terminal status
    # (which frees the Conversation): a client that sees the Response end,
    # polling or following the stream, finds the turn in the Conversation
    # and can send the next one.
    await _add_to_conversation(state, store, job, shell, terminal)
    await end(runtime, job, terminal, recorded.take())
    await _discard_checkpoints(run)


def _failed(
    response_id: str,
    encoder: ResponseStreamEncoder,
    recorded: RecordingSink,
    exc: Exception,
) -> dict[str, Any]:
    """End a run that raised outside its graph's stream: a refusal (a resume
    whose pause went after submit, in the expiry sweep) with its own code
    and message, anything else as a server error. The failure's events wait in
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
        recorded.take()
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
    encoder: ResponseStreamEncoder,
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


async def _hand_back_when_possible(store: ResponseStore, response_id: str) -> None:
    """Record the hand-back of a run a database fault stopped, once the
    database takes it (within ``HAND_BACK_PATIENCE`` seconds): then the
    fault does not count as a lost run. Past that the run counts as lost."""
    waited, delay = 0.0, 0.5
    while True:
        try:
            await store.hand_back(response_id)
            return
        except Exception as error:
            if database_fault(error) is None or waited >= HAND_BACK_PATIENCE:
                logger.error(
                    "background.hand_back_failed response=%s: %s", response_id, error
                )
                return
        await asyncio.sleep(delay)
        waited += delay
        delay = min(delay * 2, 5.0)


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


def _interrupt_protocol(state: ServeState, model: str) -> InterruptProtocol:
    """How the model's graph presents a pause (the default when the graph
    is gone: the run then fails as it opens)."""
    config = state.registry.registry.get(model)
    return config.interrupt_protocol if config is not None else "function_call"
