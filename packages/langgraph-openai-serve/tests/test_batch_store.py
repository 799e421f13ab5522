"""One conformance suite for every ``BatchStore``: memory and PostgreSQL.

Each test runs against both backends (the ``backend`` fixture of
``backend_fixtures.py``), so they scope and page batches, count results, move statuses,
hand out chunks and settle the lines that never ran the same way, and queue
steps in the transaction that changes the batch: both happen or neither.
"""

from __future__ import annotations

import asyncio
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


@pytest.fixture
def batch_store(backend):
    return backend.batches


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


async def test_pending_lines_are_those_of_the_range_without_a_result(batch_store):
    batch_id = await _started(batch_store, lines=6, chunks=2)
    await batch_store.record(batch_id, _result(1))
    await batch_store.record(batch_id, _result(4, failed=True))
    lines = _lines(6)

    assert await batch_store.pending(batch_id, 0, 3) == [lines[0], lines[2]]
    assert await batch_store.pending(batch_id, 3, 6) == [lines[3], lines[5]]
    assert await batch_store.pending(batch_id, 6, 9) == []


async def test_a_result_is_recorded_once_however_often_the_line_runs(batch_store):
    batch_id = await _started(batch_store, lines=2)
    runs = [
        LineResult(0, run % 2 == 1, f'{{"run":{run}}}', Usage(input_tokens=10))
        for run in range(6)
    ]

    kept = await asyncio.gather(*(batch_store.record(batch_id, r) for r in runs))
    again = await batch_store.record(batch_id, runs[0])

    assert kept.count(True) == 1
    assert again is False
    [winner] = [run for run, won in zip(runs, kept, strict=True) if won]
    batch = await batch_store.get(batch_id, "alice")
    assert batch is not None
    expected = (0, 1) if winner.failed else (1, 0)
    assert _counts(batch)[1:] == expected
    assert batch["usage"]["input_tokens"] == 10
    assert await _results(batch_store, batch_id, failed=winner.failed) == [winner.text]
    assert await _results(batch_store, batch_id, failed=not winner.failed) == []


async def test_recorded_results_add_to_the_counters_and_the_usage(batch_store):
    batch_id = await _started(batch_store, lines=3)
    await batch_store.record(batch_id, _result(0, usage=Usage(10, 4, 2, 1)))
    await batch_store.record(batch_id, _result(1, failed=True, usage=Usage(3, 0)))
    await batch_store.record(batch_id, _result(2, usage=Usage(7, 6, 5, 3)))

    batch = await batch_store.get(batch_id, "alice")

    assert batch is not None
    assert _counts(batch) == (3, 2, 1)
    assert batch["usage"] == {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 7},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 4},
        "total_tokens": 30,
    }


async def test_a_result_for_a_line_the_store_does_not_hold_is_refused(batch_store):
    batch_id = await _started(batch_store, lines=2)

    assert await batch_store.record(batch_id, _result(5)) is False

    assert _counts(await batch_store.get(batch_id, "alice")) == (2, 0, 0)
    assert await _results(batch_store, batch_id, failed=False) == []


async def test_a_batch_moves_only_from_the_listed_statuses(batch_store):
    batch_id = await _created(batch_store)
    queue = Queue(batch_store)

    refused = await batch_store.transition(
        batch_id,
        frozenset({"in_progress", "finalizing"}),
        {"status": "cancelled", "cancelled_at": 5},
        ending="completed",
        chunks=3,
        enqueue=queue.enqueue,
    )
    unchanged = await _stored(batch_store, batch_id)
    moved = await batch_store.transition(
        batch_id,
        frozenset({"validating", "in_progress"}),
        {"status": "cancelling", "cancelling_at": 6},
    )

    assert refused is False
    assert queue.steps == []  # nothing queued when it did not move
    assert (unchanged.status, unchanged.batch["cancelled_at"]) == ("validating", None)
    assert (unchanged.ending, unchanged.chunks) == (None, 0)
    assert moved is True
    after = await batch_store.get(batch_id, "alice")
    assert after is not None
    assert (after["status"], after["cancelling_at"]) == ("cancelling", 6)


async def test_an_unknown_batch_does_not_move(batch_store):
    queue = Queue(batch_store)

    moved = await batch_store.transition(
        "batch_unknown",
        frozenset({"validating"}),
        {"status": "in_progress"},
        enqueue=queue.enqueue,
    )

    assert moved is False
    assert queue.steps == []
    assert await batch_store.read("batch_unknown") is None


async def test_a_transition_merges_its_fields_and_keeps_the_others(batch_store):
    batch = _batch()
    await batch_store.create("alice", batch, _nothing)

    await batch_store.transition(
        batch["id"],
        frozenset({"validating"}),
        {
            "status": "in_progress",
            "in_progress_at": 7,
            "model": "echo",
            "request_counts": {"total": 4, "completed": 0, "failed": 0},
        },
    )
    await batch_store.transition(
        batch["id"], frozenset({"in_progress"}), {"output_file_id": "file-out"}
    )

    after = await batch_store.get(batch["id"], "alice")
    assert after == {
        **batch,
        "status": "in_progress",
        "in_progress_at": 7,
        "model": "echo",
        "output_file_id": "file-out",
        "request_counts": {"total": 4, "completed": 0, "failed": 0},
        "usage": Usage().body(),
    }


async def test_a_transition_sets_the_ending_and_chunks_and_later_ones_keep_them(
    batch_store,
):
    batch_id = await _created(batch_store)

    await batch_store.transition(
        batch_id, frozenset({"validating"}), {"status": "in_progress"}, chunks=4
    )
    started = await _stored(batch_store, batch_id)
    await batch_store.transition(
        batch_id,
        frozenset({"in_progress"}),
        {"status": "finalizing"},
        ending="completed",
    )
    finalizing = await _stored(batch_store, batch_id)
    await batch_store.transition(
        batch_id, frozenset({"finalizing"}), {"output_file_id": "file-out"}
    )
    written = await _stored(batch_store, batch_id)

    assert (started.ending, started.chunks) == (None, 4)
    assert (finalizing.ending, finalizing.chunks) == ("completed", 4)
    assert (written.ending, written.chunks, written.status) == (
        "completed",
        4,
        "finalizing",
    )


async def test_a_transition_queues_its_steps_in_its_transaction_when_it_moves(
    batch_store,
):
    batch_id = await _created(batch_store)
    queue = Queue(batch_store)

    moved = await batch_store.transition(
        batch_id,
        frozenset({"validating"}),
        {"status": "cancelling"},
        enqueue=queue.enqueue,
    )
    again = await batch_store.transition(
        batch_id,
        frozenset({"validating"}),
        {"status": "cancelling"},
        enqueue=queue.enqueue,
    )

    assert (moved, again) == (True, False)
    assert queue.steps == [True]


async def test_a_transition_whose_steps_cannot_be_queued_changes_nothing(
    batch_store,
):
    batch_id = await _created(batch_store)

    with pytest.raises(QueueDown):
        await batch_store.transition(
            batch_id,
            frozenset({"validating"}),
            {"status": "finalizing", "finalizing_at": 8},
            ending="expired",
            chunks=2,
            enqueue=_down,
        )

    stored = await _stored(batch_store, batch_id)
    assert (stored.status, stored.batch["finalizing_at"]) == ("validating", None)
    assert (stored.ending, stored.chunks) == (None, 0)


async def test_chunks_are_claimed_in_order_up_to_the_most_asked_then_none(
    batch_store,
):
    batch_id = await _started(batch_store, lines=5, chunks=5)
    queue = Queue(batch_store)

    taken = [
        await batch_store.claim_chunks(batch_id, most, queue.enqueue_chunks)
        for most in (2, 1, 3, 2)
    ]

    assert taken == [[0, 1], [2], [3, 4], []]
    assert queue.chunks == [[0, 1], [2], [3, 4]]  # nothing queued for none


async def test_claimed_counts_the_chunks_taken_so_far(batch_store):
    batch_id = await _started(batch_store, lines=4, chunks=4)

    before = await batch_store.claimed(batch_id)
    await batch_store.claim_chunks(batch_id, 3, _nothing)
    after = await batch_store.claimed(batch_id)
    await batch_store.claim_chunks(batch_id, 3, _nothing)

    assert (before, after, await batch_store.claimed(batch_id)) == (0, 3, 4)


async def test_claims_at_once_never_take_a_chunk_twice(batch_store):
    batch_id = await _started(batch_store, lines=5, chunks=5)

    async def slow(transaction: Any, numbers: list[int]) -> None:
        # A queue's round trip inside the claim (a statement in its
        # transaction; in memory a yield): the other claims overlap it.
        if transaction is not None:
            await transaction.execute("SELECT 1")
        else:
            await asyncio.sleep(0)

    taken = await asyncio.gather(
        *(batch_store.claim_chunks(batch_id, 1, slow) for _ in range(8))
    )

    assert sorted(itertools.chain.from_iterable(taken)) == [0, 1, 2, 3, 4]
    assert taken.count([]) == 3


async def test_chunks_that_cannot_be_queued_stay_unclaimed(batch_store):
    batch_id = await _started(batch_store, lines=3, chunks=3)
    queue = Queue(batch_store)

    with pytest.raises(QueueDown):
        await batch_store.claim_chunks(batch_id, 2, _down)

    assert await batch_store.claimed(batch_id) == 0
    assert await batch_store.claim_chunks(batch_id, 2, queue.enqueue_chunks) == [0, 1]


async def test_settle_gives_every_unrun_line_an_error_not_counted_as_failed(
    batch_store,
):
    batch_id = await _started(batch_store, lines=4)
    await batch_store.record(batch_id, _result(1))
    await batch_store.record(batch_id, _result(2, failed=True))

    await batch_store.settle(batch_id, "batch_cancelled", "Cancelled before it ran.")

    errors = await _results(batch_store, batch_id, failed=True)
    unrun = [json.loads(errors[0]), json.loads(errors[2])]
    assert errors[1] == _result(2, failed=True).text
    assert [line["custom_id"] for line in unrun] == ["req-0", "req-3"]
    for line in unrun:
        assert line["response"] is None
        assert line["error"] == {
            "code": "batch_cancelled",
            "message": "Cancelled before it ran.",
        }
        assert line["id"].startswith("batch_req_")
    assert unrun[0]["id"] != unrun[1]["id"]
    assert await _results(batch_store, batch_id, failed=False) == [_result(1).text]
    assert await batch_store.pending(batch_id, 0, 4) == []
    assert _counts(await batch_store.get(batch_id, "alice")) == (4, 1, 1)


async def test_a_settled_line_keeps_its_first_error(batch_store):
    batch_id = await _started(batch_store, lines=1)
    await batch_store.settle(batch_id, "batch_expired", "Expired.")
    first = await _results(batch_store, batch_id, failed=True)

    await batch_store.settle(batch_id, "batch_cancelled", "Cancelled.")

    assert await _results(batch_store, batch_id, failed=True) == first
    assert json.loads(first[0])["error"]["code"] == "batch_expired"


async def test_results_come_in_input_order_split_into_output_and_errors(
    batch_store,
):
    batch_id = await _started(batch_store, lines=5)
    for seq, failed in ((3, True), (0, False), (4, False), (1, True), (2, False)):
        await batch_store.record(batch_id, _result(seq, failed=failed))

    output = await _results(batch_store, batch_id, failed=False)
    errors = await _results(batch_store, batch_id, failed=True)

    assert output == [_result(seq).text for seq in (0, 2, 4)]
    assert errors == [_result(seq, failed=True).text for seq in (1, 3)]


async def test_dropped_lines_leave_nothing_to_run_or_write_and_keep_the_counters(
    batch_store,
):
    batch_id = await _started(batch_store, lines=3)
    await batch_store.record(batch_id, _result(0))
    await batch_store.record(batch_id, _result(1, failed=True))

    await batch_store.drop_lines(batch_id)

    assert await batch_store.pending(batch_id, 0, 3) == []
    assert await _results(batch_store, batch_id, failed=False) == []
    assert await _results(batch_store, batch_id, failed=True) == []
    assert await batch_store.record(batch_id, _result(0)) is False  # a late run
    assert _counts(await batch_store.get(batch_id, "alice")) == (3, 1, 1)


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
