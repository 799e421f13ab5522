"""``InMemoryBatchStore``: batches in this process's memory.

Right for one process and for tests; a restart forgets every batch. A
change whose steps could not be queued (the enqueue raised) is undone, as
PostgreSQL's transaction would be; the undo is exact because the in-process
queue's ``defer`` never waits, so nothing else changes the batch meanwhile.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.batches.protocol import (
    OPEN_STATUSES,
    OVERDUE_PAGE,
    TERMINAL_STATUSES,
    BatchLine,
    ChunkEnqueue,
    Enqueue,
    LineResult,
    StoredBatch,
    Usage,
)
from langgraph_openai_serve.compact_json import dumps
from langgraph_openai_serve.ids import random_hex
from langgraph_openai_serve.operations.admission import LimitReached

logger = logging.getLogger("langgraph_openai_serve")


@dataclass
class _Batch:
    scope: str
    batch: dict[str, Any]
    ending: str | None = None
    chunks: int = 0
    next_chunk: int = 0
    completed: int = 0
    failed: int = 0
    usage: Usage = field(default_factory=Usage)
    lines: dict[int, BatchLine] = field(default_factory=dict)
    results: dict[int, LineResult] = field(default_factory=dict)


class InMemoryBatchStore:
    def __init__(self) -> None:
        self._batches: dict[str, _Batch] = {}

    async def create(
        self,
        scope: str,
        batch: dict[str, Any],
        enqueue: Enqueue,
        most_open: int | None = None,
    ) -> None:
        if most_open is not None:
            open_ = sum(
                1
                for kept in self._batches.values()
                if kept.scope == scope and kept.batch["status"] not in TERMINAL_STATUSES
            )
            if open_ >= most_open:
                raise LimitReached("tenant_batches", most_open)
        self._batches[batch["id"]] = _Batch(scope, copy.deepcopy(batch))
        try:
            await enqueue(None)
        except BaseException:  # both or neither, as in a transaction
            del self._batches[batch["id"]]
            raise

    async def get(self, batch_id: str, scope: str) -> dict[str, Any] | None:
        kept = self._batches.get(batch_id)
        if kept is None or kept.scope != scope:
            return None
        return _public(kept)

    async def page(
        self, scope: str, after: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], bool]:
        ids = sorted(
            (i for i, b in self._batches.items() if b.scope == scope), reverse=True
        )
        if after is not None:
            ids = [i for i in ids if i < after]
        return [_public(self._batches[i]) for i in ids[:limit]], len(ids) > limit

    async def read(self, batch_id: str) -> StoredBatch | None:
        kept = self._batches.get(batch_id)
        if kept is None:
            return None
        return StoredBatch(
            scope=kept.scope,
            batch=copy.deepcopy(kept.batch),
            ending=kept.ending,
            chunks=kept.chunks,
            completed=kept.completed,
            failed=kept.failed,
        )

    async def add_lines(self, batch_id: str, lines: Sequence[BatchLine]) -> None:
        kept = self._batches[batch_id]
        for line in lines:
            kept.lines[line.seq] = line

    async def drop_lines(self, batch_id: str) -> None:
        kept = self._batches[batch_id]
        kept.lines.clear()
        kept.results.clear()

    async def transition(
        self,
        batch_id: str,
        before: frozenset[str],
        fields: dict[str, Any],
        *,
        ending: str | None = None,
        chunks: int | None = None,
        enqueue: Enqueue | None = None,
    ) -> bool:
        kept = self._batches.get(batch_id)
        if kept is None or kept.batch["status"] not in before:
            return False
        before_change = (dict(kept.batch), kept.ending, kept.chunks)
        kept.batch.update(copy.deepcopy(fields))
        if ending is not None:
            kept.ending = ending
        if chunks is not None:
            kept.chunks = chunks
        if enqueue is not None:
            try:
                await enqueue(None)
            except BaseException:
                kept.batch, kept.ending, kept.chunks = before_change
                raise
        return True

    async def claim_chunks(
        self, batch_id: str, most: int, enqueue: ChunkEnqueue
    ) -> list[int]:
        kept = self._batches[batch_id]
        first = kept.next_chunk
        kept.next_chunk = min(kept.chunks, first + most)
        taken = list(range(first, kept.next_chunk))
        if taken:
            try:
                await enqueue(None, taken)
            except BaseException:
                kept.next_chunk = first
                raise
        return taken

    async def claimed(self, batch_id: str) -> int:
        return self._batches[batch_id].next_chunk

    async def pending(self, batch_id: str, first: int, last: int) -> list[BatchLine]:
        kept = self._batches[batch_id]
        return [
            kept.lines[seq]
            for seq in range(first, last)
            if seq in kept.lines and seq not in kept.results
        ]

    async def record(self, batch_id: str, result: LineResult) -> bool:
        kept = self._batches[batch_id]
        if result.seq not in kept.lines or result.seq in kept.results:
            return False
        kept.results[result.seq] = result
        if result.failed:
            kept.failed += 1
        else:
            kept.completed += 1
        kept.usage += result.usage
        return True

    async def settle(self, batch_id: str, code: str, message: str) -> None:
        kept = self._batches[batch_id]
        for seq, line in kept.lines.items():
            if seq not in kept.results:
                kept.results[seq] = LineResult(
                    seq, True, dumps(unrun_line(line.custom_id, code, message))
                )

    async def results(self, batch_id: str, *, failed: bool) -> AsyncIterator[str]:
        kept = self._batches[batch_id]
        for seq in sorted(kept.results):
            result = kept.results[seq]
            if result.failed == failed:
                yield result.text

    async def overdue(self, now: float) -> list[str]:
        return sorted(
            batch_id
            for batch_id, kept in self._batches.items()
            if kept.batch["status"] in OPEN_STATUSES and kept.batch["expires_at"] <= now
        )[:OVERDUE_PAGE]


def unrun_line(custom_id: str, code: str, message: str) -> dict[str, Any]:
    """The error line of a request the batch never ran (cancelled, expired)."""
    return {
        "id": f"batch_req_{random_hex()}",
        "custom_id": custom_id,
        "response": None,
        "error": {"code": code, "message": message},
    }


def _public(kept: _Batch) -> dict[str, Any]:
    body = copy.deepcopy(kept.batch)
    body["request_counts"] = {
        "total": body.get("request_counts", {}).get("total", 0),
        "completed": kept.completed,
        "failed": kept.failed,
    }
    body["usage"] = kept.usage.body()
    return body
