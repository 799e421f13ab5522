"""One conformance suite for every ``BatchStore``: memory and PostgreSQL.

Each test runs against both backends (the ``batch_store`` fixture of
``backend_fixtures.py``). This part keeps batches: one is created with its
validation queued in the same transaction (both happen or neither), within
its scope's open limit; scopes find and page only their own batches, newest
first; ``read`` gives the scope, status, ending, chunks and counters; and
``overdue`` lists the open batches whose window ended. Its helpers (batches,
lines, results, a recording queue) serve ``test_batch_store_transitions.py``
and ``test_batch_store_lines.py`` too.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
from langgraph_openai_serve.batches.objects import new_batch, new_batch_id
from langgraph_openai_serve.batches.protocol import (
    OVERDUE_PAGE,
    BatchLine,
    BatchStore,
    LineResult,
    StoredBatch,
    Usage,
)
from langgraph_openai_serve.operations.admission import LimitReached
from psycopg.pq import TransactionStatus

pytestmark = pytest.mark.anyio


class QueueDown(Exception):
    """What an enqueue raises when the queue cannot take the steps."""


class Queue:
    """Enqueues that note each call and whether it came with the store's
    open transaction (a connection inside one on PostgreSQL, ``None`` in
    memory)."""

    def __init__(self, store: BatchStore) -> None:
        self._store = store
        self.steps: list[bool] = []
        self.chunks: list[list[int]] = []

    def _in_transaction(self, transaction: Any) -> bool:
        if transaction is None:  # a store without transactions (memory)
            return True
        status = transaction.info.transaction_status
        return bool(status == TransactionStatus.INTRANS)

    async def enqueue(self, transaction: Any) -> None:
        self.steps.append(self._in_transaction(transaction))

    async def enqueue_chunks(self, transaction: Any, numbers: list[int]) -> None:
        assert self._in_transaction(transaction)
        self.chunks.append(numbers)


async def _down(transaction: Any, *numbers: Any) -> None:
    raise QueueDown


async def _nothing(transaction: Any, *numbers: Any) -> None:
    return None


_START = time.time()
_made = itertools.count()


def _batch(**fields: Any) -> dict[str, Any]:
    """A new ``validating`` Batch object, each made a millisecond after the
    one before (ids sort by creation)."""
    batch = new_batch(
        endpoint="/v1/responses",
        input_file_id="file-input",
        metadata={"team": "a"},
        output_expires_after=None,
        window_seconds=24 * 3600,
    )
    batch["id"] = new_batch_id(_START + next(_made) / 1000)
    batch.update(fields)
    return batch


async def _created(store: BatchStore, scope: str = "alice", **fields: Any) -> str:
    batch = _batch(**fields)
    await store.create(scope, batch, _nothing)
    return str(batch["id"])


def _lines(count: int) -> list[BatchLine]:
    return [
        BatchLine(seq, seq + 1, f"req-{seq}", json.dumps({"input": f"line {seq}"}))
        for seq in range(count)
    ]


async def _started(store: BatchStore, lines: int, chunks: int = 1) -> str:
    """An ``in_progress`` batch with ``lines`` lines in ``chunks`` chunks."""
    batch_id = await _created(store)
    await store.add_lines(batch_id, _lines(lines))
    counts = {"total": lines, "completed": 0, "failed": 0}
    moved = await store.transition(
        batch_id,
        frozenset({"validating"}),
        {"status": "in_progress", "request_counts": counts},
        chunks=chunks,
    )
    assert moved
    return batch_id


def _result(
    seq: int, *, failed: bool = False, usage: Usage | None = None
) -> LineResult:
    text = json.dumps({"custom_id": f"req-{seq}", "failed": failed})
    return LineResult(seq, failed, text, usage or Usage())


async def _stored(store: BatchStore, batch_id: str) -> StoredBatch:
    stored = await store.read(batch_id)
    assert stored is not None
    return stored


async def _results(store: BatchStore, batch_id: str, *, failed: bool) -> list[str]:
    return [line async for line in store.results(batch_id, failed=failed)]


def _counts(batch: dict[str, Any] | None) -> tuple[int, int, int]:
    assert batch is not None
    counts = batch["request_counts"]
    return counts["total"], counts["completed"], counts["failed"]


async def test_a_created_batch_is_kept_and_its_validation_queued_with_it(
    batch_store,
):
    queue = Queue(batch_store)
    batch = _batch()

    await batch_store.create("alice", batch, queue.enqueue)
    kept = await batch_store.get(batch["id"], "alice")

    assert queue.steps == [True]  # once, inside the store's transaction
    assert kept == {
        **batch,
        "usage": Usage().body(),
        "request_counts": {"total": 0, "completed": 0, "failed": 0},
    }
    stored = await _stored(batch_store, batch["id"])
    assert (stored.scope, stored.status, stored.ending) == ("alice", "validating", None)


async def test_a_batch_whose_validation_cannot_be_queued_is_not_kept(batch_store):
    batch = _batch(expires_at=0)

    with pytest.raises(QueueDown):
        await batch_store.create("alice", batch, _down)

    assert await batch_store.get(batch["id"], "alice") is None
    assert await batch_store.read(batch["id"]) is None
    assert await batch_store.page("alice", None, 10) == ([], False)
    assert await batch_store.overdue(time.time()) == []


async def test_a_scope_at_its_open_limit_is_refused_until_one_ends(batch_store):
    ended = _batch()
    await batch_store.create("alice", ended, _nothing, 2)
    await batch_store.create("alice", _batch(), _nothing, 2)
    refused_batch = _batch()

    with pytest.raises(LimitReached) as refused:
        await batch_store.create("alice", refused_batch, _nothing, 2)
    kept_refused = await batch_store.read(refused_batch["id"])
    await batch_store.create("bob", _batch(), _nothing, 2)
    await batch_store.transition(
        ended["id"], frozenset({"validating"}), {"status": "failed"}
    )
    await batch_store.create("alice", refused_batch, _nothing, 2)

    assert (refused.value.limit, refused.value.allowed) == ("tenant_batches", 2)
    assert kept_refused is None
    assert await batch_store.read(refused_batch["id"]) is not None


async def test_another_scope_finds_no_batch_and_lists_none(batch_store):
    batch_id = await _created(batch_store, "alice")

    assert await batch_store.get(batch_id, "bob") is None
    assert await batch_store.page("bob", None, 10) == ([], False)
    assert await batch_store.get("batch_unknown", "alice") is None
    assert await batch_store.page("alice", None, 10) == (
        [await batch_store.get(batch_id, "alice")],
        False,
    )


async def test_batches_are_paged_newest_first_after_an_id(batch_store):
    ids = [await _created(batch_store, "alice") for _ in range(5)]
    await _created(batch_store, "bob")
    newest = ids[::-1]

    pages = []
    after = None
    while True:
        page, more = await batch_store.page("alice", after, 2)
        pages.append(([batch["id"] for batch in page], more))
        if not more:
            break
        after = page[-1]["id"]

    assert pages == [(newest[0:2], True), (newest[2:4], True), (newest[4:], False)]
    assert await batch_store.page("alice", newest[1], 3) == (
        [await batch_store.get(i, "alice") for i in newest[2:5]],
        False,
    )
    assert await batch_store.page("alice", newest[-1], 2) == ([], False)


async def test_read_gives_the_scope_status_ending_chunks_and_counters(batch_store):
    batch_id = await _started(batch_store, lines=3, chunks=2)
    await batch_store.record(batch_id, _result(0))
    await batch_store.record(batch_id, _result(1, failed=True))
    await batch_store.record(batch_id, _result(2))
    await batch_store.transition(
        batch_id, frozenset({"in_progress"}), {"status": "finalizing"}, ending="expired"
    )

    stored = await _stored(batch_store, batch_id)

    assert (stored.scope, stored.status, stored.ending, stored.chunks) == (
        "alice",
        "finalizing",
        "expired",
        2,
    )
    assert (stored.total, stored.completed, stored.failed) == (3, 2, 1)
    assert stored.batch["id"] == batch_id
    assert await batch_store.read("batch_unknown") is None


async def test_overdue_lists_the_open_batches_whose_window_ended_oldest_first(
    batch_store,
):
    now = time.time()
    oldest = await _created(batch_store, "alice", expires_at=int(now) - 300)
    running = await _created(batch_store, "bob", expires_at=int(now) - 200)
    await batch_store.transition(
        running, frozenset({"validating"}), {"status": "in_progress"}
    )
    for status in ("finalizing", "cancelling", "completed", "expired"):
        ended = await _created(batch_store, expires_at=int(now) - 100)
        await batch_store.transition(
            ended, frozenset({"validating"}), {"status": status}
        )
    at_now = await _created(batch_store, expires_at=int(now))
    await _created(batch_store, expires_at=int(now) + 60)

    assert await batch_store.overdue(now) == [oldest, running, at_now]


async def test_overdue_gives_at_most_a_page_the_oldest(batch_store):
    now = time.time()
    ids = [
        await _created(batch_store, expires_at=int(now) - 1000 + number)
        for number in range(OVERDUE_PAGE + 1)
    ]

    assert await batch_store.overdue(now) == ids[:OVERDUE_PAGE]
