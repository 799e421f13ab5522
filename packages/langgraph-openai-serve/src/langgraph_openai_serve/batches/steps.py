"""The life of a batch: create, validate, run its chunks, finalize, cancel.

``validating`` -> ``in_progress`` -> ``finalizing`` -> ``completed``, or
``failed`` when validation finds errors, ``cancelling`` -> ``cancelled`` on
cancel and ``finalizing`` -> ``expired`` past the window. Every step reads
the batch first and does nothing when its moment has passed, so a step the
queue runs again after a lost worker is harmless; status changes are
conditional on the status they leave, so of two racing steps one wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from typing import Any

from langgraph_openai_serve.batches.dispatch import Answer
from langgraph_openai_serve.batches.errors import BatchNotFoundError
from langgraph_openai_serve.batches.files import FileNotFound, FilesClient
from langgraph_openai_serve.batches.finalize import finalize, finalize_as
from langgraph_openai_serve.batches.input import read_lines
from langgraph_openai_serve.batches.objects import (
    batch_error,
    decoded,
    errors_list,
    new_batch,
    output_line,
    usage_of,
)
from langgraph_openai_serve.batches.protocol import (
    TERMINAL_STATUSES,
    BatchLine,
    BatchStep,
    LineResult,
    StoredBatch,
)
from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.compact_json import dumps
from langgraph_openai_serve.error_envelope import INTERNAL_ERROR_MESSAGE, error_body
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.jobs.protocol import Priority

logger = logging.getLogger("langgraph_openai_serve")

_CANCELLABLE = frozenset({"validating", "in_progress"})


async def create(
    runtime: BatchRuntime,
    scope: str,
    *,
    endpoint: str,
    input_file_id: str,
    metadata: dict[str, str] | None,
    output_expires_after: dict[str, Any] | None,
    most_open: int | None = None,
) -> dict[str, Any]:
    """Keep a ``validating`` batch and queue its validation; ``most_open``:
    the batches ``scope`` may have open, this one included.

    Raises:
        InvalidRequestError: no Files API, or an input file the caller
            cannot use (unknown to its owner, whoever else has one of that
            id; another purpose; too large), naming ``input_file_id``.
        LimitReached: the scope has ``most_open`` batches open already.
    """
    if runtime.files is None:
        raise InvalidRequestError(
            "Batches need the Files API: this server has none "
            "(LGOS_BATCH_FILES_URL is not set).",
            param="input_file_id",
        )
    await _refuse_unusable_input(runtime, runtime.files, input_file_id, scope)
    batch = new_batch(
        endpoint=endpoint,
        input_file_id=input_file_id,
        metadata=metadata,
        output_expires_after=output_expires_after,
        window_seconds=runtime.window_seconds,
    )
    step = BatchStep("validate", batch["id"])
    await runtime.store.create(
        scope,
        batch,
        lambda transaction: runtime.defer([step], scope, transaction),
        most_open,
    )
    created = await runtime.store.get(batch["id"], scope)
    assert created is not None
    return created


async def _refuse_unusable_input(
    runtime: BatchRuntime, files: FilesClient, file_id: str, scope: str
) -> None:
    """Refuse at once, as OpenAI does, an input file the caller cannot read
    (the Files API answers for the caller's own files only, so another
    tenant's file is as unknown as one that never was). A Files API that
    does not answer refuses nothing: validation asks again, with retries."""
    import openai

    try:
        problem = await _input_problem(runtime, files, file_id, scope)
    except openai.APIError as error:
        logger.warning("batch.input_unchecked file=%s: %s", file_id, error)
        return
    if problem is not None:
        raise InvalidRequestError(
            problem["message"], param="input_file_id", code=problem["code"]
        )


async def cancel(runtime: BatchRuntime, batch_id: str, scope: str) -> dict[str, Any]:
    """``cancelling`` now; ``cancelled`` once finalize has written the files.

    Raises:
        BatchNotFoundError: unknown here.
        InvalidRequestError: the batch already ended or is finalizing (409).
    """
    current = await runtime.store.get(batch_id, scope)
    if current is None:
        raise BatchNotFoundError(batch_id)
    step = BatchStep("finalize", batch_id)
    moved = await runtime.store.transition(
        batch_id,
        _CANCELLABLE,
        {"status": "cancelling", "cancelling_at": int(time.time())},
        enqueue=lambda transaction: runtime.defer([step], scope, transaction),
    )
    after = await runtime.store.get(batch_id, scope)
    assert after is not None
    if not moved and after["status"] not in {"cancelling", "cancelled"}:
        raise InvalidRequestError(
            f"A batch that is {after['status']} cannot be cancelled.",
            code="batch_not_cancellable",
            status_code=409,
        )
    return after


async def run_step(runtime: BatchRuntime, step: BatchStep) -> None:
    """What the queue calls for each step."""
    if step.kind == "validate":
        await _validate(runtime, step.batch_id)
    elif step.kind == "chunk":
        await _run_chunk(runtime, step.batch_id, step.chunk)
    else:
        await finalize(runtime, step.batch_id)


async def _validate(runtime: BatchRuntime, batch_id: str) -> None:
    stored = await runtime.store.read(batch_id)
    if stored is None:
        return
    if stored.status == "in_progress" and await runtime.store.claimed(batch_id) == 0:
        # lost after starting
        await _claim(runtime, batch_id, stored.scope, runtime.concurrency)
        return
    if stored.status != "validating":
        return
    files = runtime.files
    assert files is not None
    file_id = stored.batch["input_file_id"]
    problem = await _input_problem(runtime, files, file_id, stored.scope)
    if problem is not None:
        await _fail(runtime, batch_id, stored.scope, [problem])
        return
    await runtime.store.drop_lines(batch_id)  # an earlier attempt's, if any
    found = await read_lines(
        files.content(file_id, stored.scope),
        endpoint=stored.batch["endpoint"],
        known_model=runtime.known_model,
        keep=lambda lines: runtime.store.add_lines(batch_id, lines),
        limits=runtime.limits,
    )
    if found.errors:
        await runtime.store.drop_lines(batch_id)
        await _fail(runtime, batch_id, stored.scope, found.errors)
        return
    counts = {"total": found.total, "completed": 0, "failed": 0}
    started = await runtime.store.transition(
        batch_id,
        frozenset({"validating"}),
        {
            "status": "in_progress",
            "in_progress_at": int(time.time()),
            "model": found.model,
            "request_counts": counts,
        },
        chunks=chunk_count(found.total, runtime.lines_per_job, runtime.concurrency),
    )
    if started:
        await _claim(runtime, batch_id, stored.scope, runtime.concurrency)
    else:  # cancelled or expired meanwhile: finalize settles every line
        await runtime.store.transition(
            batch_id,
            frozenset({"cancelling", "finalizing"}),
            {"request_counts": counts},
        )


async def _input_problem(
    runtime: BatchRuntime, files: FilesClient, file_id: str, scope: str
) -> dict[str, Any] | None:
    try:
        found = await files.describe(file_id, scope)
    except FileNotFound:
        return batch_error(
            "file_not_found",
            f"No file found with id '{file_id}'.",
            param="input_file_id",
        )
    if found.purpose != "batch":
        return batch_error(
            "invalid_file_purpose",
            f"The input file's purpose is '{found.purpose}'; a batch reads a "
            "file uploaded with purpose 'batch'.",
            param="input_file_id",
        )
    if found.bytes > runtime.limits.bytes:
        return batch_error(
            "file_too_large",
            f"The input file is {found.bytes} bytes; a batch reads at most "
            f"{runtime.limits.bytes}.",
            param="input_file_id",
        )
    return None


async def _fail(
    runtime: BatchRuntime, batch_id: str, scope: str, errors: list[dict[str, Any]]
) -> None:
    await runtime.store.transition(
        batch_id,
        frozenset({"validating"}),
        {
            "status": "failed",
            "failed_at": int(time.time()),
            "errors": errors_list(errors),
        },
        enqueue=lambda transaction: runtime.announce(
            transaction, "batch.failed", batch_id, scope
        ),
    )


def chunk_count(total: int, most_lines: int, concurrency: int) -> int:
    """How many chunks ``total`` lines are cut into: rounds of
    ``concurrency`` equal chunks of at most ``most_lines`` lines, so every
    round keeps the batch's slots busy to its end (120 lines, 25 at most, 4
    at once: 8 chunks of 15 rather than 5 of 25, whose last one would run
    alone). A chunk's lines are ``size`` consecutive ones, ``size`` being
    ``ceil(total / chunks)``."""
    if total == 0:
        return 0
    rounds = math.ceil(total / (concurrency * most_lines))
    size = math.ceil(total / (rounds * concurrency))
    return math.ceil(total / size)


async def _claim(runtime: BatchRuntime, batch_id: str, scope: str, most: int) -> None:
    async def enqueue(transaction: Any, numbers: list[int]) -> None:
        steps = [BatchStep("chunk", batch_id, number) for number in numbers]
        await runtime.defer(steps, scope, transaction)

    await runtime.store.claim_chunks(batch_id, most, enqueue)


async def _run_chunk(runtime: BatchRuntime, batch_id: str, chunk: int) -> None:
    stored = await runtime.store.read(batch_id)
    if stored is None or stored.status != "in_progress":
        return
    size = math.ceil(stored.total / max(stored.chunks, 1))
    watch = _Watch(runtime, batch_id)
    lines = await runtime.store.pending(batch_id, chunk * size, (chunk + 1) * size)
    for number, line in enumerate(lines, start=1):
        result = await _run_watched(runtime, stored, line, watch)
        if result is None:
            return  # cancelled or expired: finalize settles the rest
        await runtime.store.record(batch_id, result)
        if number < len(lines) and await runtime.jobs.outranked(
            Priority.BULK, stored.scope
        ):
            # Offer the slot to urgent work or a tenant with less of the
            # workers: the chunk's other lines go back on the queue behind it
            # (``pending`` skips those recorded).
            await runtime.defer([BatchStep("chunk", batch_id, chunk)], stored.scope)
            return
    await _claim(runtime, batch_id, stored.scope, 1)
    await _finish_if_done(runtime, batch_id)


class _Watch:
    """Whether a chunk's batch still runs, read from the store at most every
    ``poll_interval`` seconds: fast lines do not pay a read each, and a
    cancel or the expiry is seen within that time."""

    def __init__(self, runtime: BatchRuntime, batch_id: str) -> None:
        self._runtime = runtime
        self._batch_id = batch_id
        self._checked = -math.inf

    async def running(self) -> bool:
        now = time.monotonic()
        if now - self._checked < self._runtime.poll_interval:
            return True
        self._checked = now
        return await _still_running(self._runtime, self._batch_id)


async def _run_watched(
    runtime: BatchRuntime, stored: StoredBatch, line: BatchLine, watch: _Watch
) -> LineResult | None:
    """Run ``line``; ``None`` when the batch stopped running meanwhile."""
    if not await watch.running():
        return None
    run = asyncio.create_task(_run_line(runtime, stored, line))
    try:
        while True:
            done, _ = await asyncio.wait({run}, timeout=runtime.poll_interval)
            if done:
                return run.result()
            if not await watch.running():
                return None
    finally:
        if not run.done():
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run


async def _run_line(
    runtime: BatchRuntime, stored: StoredBatch, line: BatchLine
) -> LineResult:
    try:
        answer = await runtime.dispatcher.post(
            stored.batch["endpoint"], line.body.encode(), stored.scope
        )
    except Exception:
        logger.exception(
            "batch.line_failed batch=%s line=%d", stored.batch["id"], line.number
        )
        body = error_body(INTERNAL_ERROR_MESSAGE, "server_error")
        answer = Answer(500, None, dumps(body).encode())
    body = decoded(answer.body)
    failed = not 200 <= answer.status < 300
    text = dumps(output_line(line.custom_id, answer.status, answer.request_id, body))
    return LineResult(line.seq, failed, text, usage_of(body))


async def _still_running(runtime: BatchRuntime, batch_id: str) -> bool:
    """The batch is ``in_progress`` and inside its window; past the window
    it moves to ``finalizing`` (expired) here."""
    stored = await runtime.store.read(batch_id)
    if stored is None or stored.status != "in_progress":
        return False
    if time.time() < stored.batch["expires_at"]:
        return True
    await finalize_as(runtime, batch_id, stored.scope, "expired")
    return False


async def _finish_if_done(runtime: BatchRuntime, batch_id: str) -> None:
    stored = await runtime.store.read(batch_id)
    if stored is None or stored.status != "in_progress":
        return
    if stored.completed + stored.failed >= stored.total:
        await finalize_as(runtime, batch_id, stored.scope, "completed")


async def give_up(runtime: BatchRuntime, step: BatchStep) -> None:
    """A step that kept failing (the store or the Files API broke): its
    batch fails rather than waiting forever."""
    stored = await runtime.store.read(step.batch_id)
    if stored is None or stored.status in TERMINAL_STATUSES:
        return
    error = batch_error(
        "server_error", "The batch could not be processed; try again later."
    )
    await runtime.store.transition(
        step.batch_id,
        frozenset({stored.status}),
        {
            "status": "failed",
            "failed_at": int(time.time()),
            "errors": errors_list([error]),
        },
        enqueue=lambda transaction: runtime.announce(
            transaction, "batch.failed", step.batch_id, stored.scope
        ),
    )
