"""A batch's end: ``finalizing`` (or ``cancelling``), the output and error
files written to the Files API, then the final status.

Writing a file and keeping its id are two steps, so a worker lost between
them leaves an upload the batch never names; the queue then runs the
finalize step again. Each file's name is fixed by the batch
(``<batch id>_batch_output.jsonl``) and only service keys write
``batch_output`` files, so the run that follows finds such an upload among
the tenant's newest files: it keeps it when it holds the same bytes (the
results no longer change once the batch is ending) and deletes it
otherwise, so the tenant never sees two files for one batch.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from langgraph_openai_serve.batches.files import FilesClient
from langgraph_openai_serve.batches.protocol import BatchStep, StoredBatch
from langgraph_openai_serve.batches.runtime import BatchRuntime

_ENDING = frozenset({"finalizing", "cancelling"})
_SPOOL_BYTES = 8 * 1024 * 1024
_CLOCK_SLACK = 300
"""Seconds an upload may seem to precede the batch's ending (the Files API's
clock against the worker's) and still be looked at."""


async def finalize_as(
    runtime: BatchRuntime,
    batch_id: str,
    scope: str | None,
    ending: str,
    before: frozenset[str] = frozenset({"in_progress"}),
) -> bool:
    """``finalizing`` now, because the batch (of ``scope``, when known) is
    ``ending`` (``completed``, ``expired``), and the finalize step queued;
    whether it moved."""
    step = BatchStep("finalize", batch_id)
    return await runtime.store.transition(
        batch_id,
        before,
        {"status": "finalizing", "finalizing_at": int(time.time())},
        ending=ending,
        enqueue=lambda transaction: runtime.defer([step], scope, transaction),
    )


async def finalize(runtime: BatchRuntime, batch_id: str) -> None:
    """The finalize step: settle the lines that never ran, write the files,
    end the batch."""
    stored = await runtime.store.read(batch_id)
    if stored is None or stored.status not in _ENDING:
        return
    if stored.status == "cancelling":
        final = "cancelled"
        await runtime.store.settle(
            batch_id,
            "batch_cancelled",
            "The batch was cancelled before this request ran.",
        )
    elif stored.ending == "expired":
        final = "expired"
        await runtime.store.settle(
            batch_id,
            "batch_expired",
            "The batch expired before this request ran.",
        )
    else:
        final = "completed"
    files: dict[str, Any] = {}
    for failed, name in ((False, "output_file_id"), (True, "error_file_id")):
        if stored.batch.get(name) is None:
            files[name] = await _write_results(runtime, stored, failed=failed)
            # Kept at once: a finalize run again after a crash reuses it.
            await runtime.store.transition(batch_id, frozenset({stored.status}), files)
    ended = await runtime.store.transition(
        batch_id,
        frozenset({stored.status}),
        {"status": final, f"{final}_at": int(time.time())},
        enqueue=lambda transaction: runtime.announce(
            transaction, f"batch.{final}", batch_id, stored.scope
        ),
    )
    if ended:
        await runtime.store.drop_lines(batch_id)


async def _write_results(
    runtime: BatchRuntime, stored: StoredBatch, *, failed: bool
) -> str | None:
    """Upload the batch's output (or error) lines; the file's id, ``None``
    when there are none."""
    files = runtime.files
    assert files is not None
    batch_id = stored.batch["id"]
    name = f"{batch_id}_{'batch_errors' if failed else 'batch_output'}.jsonl"
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as spool:
        size = 0
        async for text in runtime.store.results(batch_id, failed=failed):
            size += spool.write(text.encode()) + spool.write(b"\n")
        if size == 0:
            return None
        earlier = await _earlier_upload(files, stored, name, size)
        if earlier is not None:
            return earlier
        spool.seek(0)
        # The SDK hands the file object to httpx, which sends it in 64 KiB
        # reads: the spool is never read whole (test_batch_files.py).
        return await files.upload(
            stored.scope, name, spool, stored.batch.get("output_expires_after")
        )


async def _earlier_upload(
    files: FilesClient, stored: StoredBatch, name: str, size: int
) -> str | None:
    """The id of this file uploaded by an earlier run of the step, if it
    holds ``size`` bytes; other such uploads are deleted."""
    batch = stored.batch
    moment = "cancelling_at" if stored.status == "cancelling" else "finalizing_at"
    since = int(batch.get(moment) or batch["created_at"]) - _CLOCK_SLACK
    kept: str | None = None
    for upload in await files.uploads_named(stored.scope, name, since):
        if kept is None and upload.bytes == size:
            kept = upload.id
        else:
            await files.delete(upload.id, stored.scope)
    return kept
