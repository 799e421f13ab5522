"""Every ``BatchStore`` (memory and PostgreSQL, the ``batch_store`` fixture of
``backend_fixtures.py``) handles a batch's lines the same way: the lines of a
range still to run, a result recorded once however often its line runs
(adding to the counters and the usage), chunks claimed once each and only
when their steps are queued, the lines that never ran settled with an error,
results read back in input order, and dropped lines gone for good."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from langgraph_openai_serve.batches.protocol import LineResult, Usage
from test_batch_store_batches import (
    Queue,
    QueueDown,
    _counts,
    _down,
    _lines,
    _nothing,
    _result,
    _results,
    _started,
)

pytestmark = pytest.mark.anyio


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
