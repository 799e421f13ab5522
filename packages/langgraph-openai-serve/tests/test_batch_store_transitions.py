"""Every ``BatchStore`` (memory and PostgreSQL, the ``batch_store`` fixture of
``backend_fixtures.py``) moves a batch between statuses the same way: only
from the statuses listed, merging its fields into the batch and keeping the
others, setting the ending and chunk count that later moves keep, and
queueing its steps in the transaction that moves it (both happen or
neither)."""

from __future__ import annotations

import pytest
from langgraph_openai_serve.batches.protocol import Usage
from test_batch_store_batches import (
    Queue,
    QueueDown,
    _batch,
    _created,
    _down,
    _nothing,
    _stored,
)

pytestmark = pytest.mark.anyio


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
