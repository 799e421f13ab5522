"""How batches share the workers, on PostgreSQL with real ``lgos worker``
processes: one batch's lines run on several workers at once, a batch takes
no more than ``LGOS_BATCH_CONCURRENCY`` worker slots so a background
Response submitted after it still runs, and a batch expires at the end of
its window even when none of its lines can run.

Lines whose input starts with ``hold`` wait for the test (``batch_app``);
each worker runs one job at a time here, so which worker runs what is fixed
by the queue's order, not by timing.
"""

from __future__ import annotations

import signal

import pytest
from background_stack import TERMINAL
from batch_stack import (
    StackFactory,
    create_batch,
    lines_of,
    pids_that_started,
    upload_lines,
)
from lgos_testkit import wait_for_batch, wait_until
from openai import OpenAI

pytestmark = pytest.mark.timeout(600)


def test_a_batch_spreads_over_workers_and_leaves_room_for_a_background_run(
    batch_stack: StackFactory, files: OpenAI
) -> None:
    stack = batch_stack(
        LGOS_BATCH_CONCURRENCY="2",
        LGOS_BATCH_LINES_PER_JOB="1",
        LGOS_BACKGROUND_CONCURRENCY="1",
        # No slot kept for urgent work: room is what the batch leaves.
        LGOS_BACKGROUND_RESERVED_SLOTS="0",
    )
    input_file = upload_lines(files, ["hold-0", "hold-1", "hold-2"])
    stack.start_api()
    workers = [stack.start_worker() for _ in range(3)]
    client = stack.client()
    batch = create_batch(client, input_file)

    # Two chunks at a time, one line each: two workers hold a line each.
    wait_until(
        lambda: (
            bool(pids_that_started(stack, "hold-0"))
            and bool(pids_that_started(stack, "hold-1"))
        ),
        120,
        "the batch's first two lines",
    )
    holding = pids_that_started(stack, "hold-0") | pids_that_started(stack, "hold-1")
    # The batch queued no third chunk, so the third worker's slot goes to a
    # background Response submitted now, while the batch still runs.
    submitted = client.responses.create(
        model="work", input="interactive", background=True
    )
    wait_until(
        lambda: (
            stack.status(submitted.id) in TERMINAL
            or bool(pids_that_started(stack, "hold-2"))
        ),
        120,
        "the background Response (or a third line of the batch)",
    )
    interactive = client.responses.retrieve(submitted.id)
    meanwhile = client.batches.retrieve(batch.id)
    third_line_started = bool(pids_that_started(stack, "hold-2"))
    stack.release("hold")
    done = wait_for_batch(client, batch.id)

    assert len(holding) == 2, "one batch's lines ran on two workers at once"
    assert holding <= {worker.pid for worker in workers}
    assert interactive.status == "completed"
    assert interactive.output_text == "done: interactive"
    assert pids_that_started(stack, "interactive").isdisjoint(holding)
    assert not third_line_started
    assert meanwhile.status == "in_progress"
    assert meanwhile.request_counts is not None
    assert meanwhile.request_counts.completed == 0
    assert done.status == "completed", done.errors
    output = lines_of(files, done.output_file_id)
    assert [line["custom_id"] for line in output] == ["req-0", "req-1", "req-2"]


def test_a_batch_whose_chunks_all_wait_expires_at_the_end_of_its_window(
    batch_stack: StackFactory, files: OpenAI
) -> None:
    stack = batch_stack(
        LGOS_BATCH_CONCURRENCY="1",
        LGOS_BATCH_LINES_PER_JOB="1",
        LGOS_BATCH_EXPIRY_CHECK_INTERVAL="0.5",
    )
    input_file = upload_lines(files, ["hold-first", "second", "third"])
    stack.start_api()
    first = stack.start_worker()
    client = stack.client()
    batch = create_batch(client, input_file)
    wait_until(lambda: bool(pids_that_started(stack, "hold-first")), 120, "line 1")
    # Stopped, the worker hands its chunk back: every chunk of the batch now
    # waits in the queue, and no worker is left to run one.
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 0
    stopped = client.batches.retrieve(batch.id)
    waiting = stack.sql(
        "SELECT status FROM procrastinate_jobs WHERE args->>'batch_id' = %s "
        "AND args->>'kind' = 'chunk'",
        (batch.id,),
    )

    # Its window ends now (as if the time had passed).
    stack.sql(
        "UPDATE lgos_batches SET batch = jsonb_set(batch, '{expires_at}', "
        "to_jsonb(extract(epoch FROM now())::bigint)) WHERE id = %s",
        (batch.id,),
    )
    ending = wait_for_batch(client, batch.id, {"finalizing", "expired"}, 60)
    stack.release("hold")
    stack.start_worker()
    done = wait_for_batch(client, batch.id)

    assert stopped.status == "in_progress"
    assert waiting == [("todo",)]
    # Expired by the API process's sweep: no worker was running.
    assert ending.status == "finalizing"
    assert done.status == "expired"
    assert done.expired_at is not None
    assert done.output_file_id is None
    errors = lines_of(files, done.error_file_id)
    assert [line["custom_id"] for line in errors] == ["req-0", "req-1", "req-2"]
    assert {line["error"]["code"] for line in errors} == {"batch_expired"}
    # The chunk handed back did not run its line again once expired.
    assert pids_that_started(stack, "hold-first") == {first.pid}


def _started_at(stack, text: str) -> int:
    """When the (one) run on input ``text`` started, by its marker."""
    (marker,) = stack.markers_of("start", text)
    return marker.stat().st_mtime_ns


def test_a_background_response_waits_for_one_line_of_a_running_chunk_not_the_chunk(
    batch_stack: StackFactory, files: OpenAI
) -> None:
    stack = batch_stack(
        LGOS_BATCH_CONCURRENCY="1",
        LGOS_BATCH_LINES_PER_JOB="3",
        LGOS_BACKGROUND_CONCURRENCY="1",
        # No slot kept for urgent work: the chunk's own slot must be freed.
        LGOS_BACKGROUND_RESERVED_SLOTS="0",
    )
    input_file = upload_lines(files, ["hold-0", "line-1", "line-2"])
    stack.start_api()
    stack.start_worker()  # one slot, which the batch's chunk holds
    client = stack.client()
    batch = create_batch(client, input_file)
    wait_until(lambda: bool(pids_that_started(stack, "hold-0")), 120, "line 0")

    submitted = client.responses.create(
        model="work", input="interactive", background=True
    )
    stack.release("hold")
    wait_until(lambda: stack.status(submitted.id) in TERMINAL, 120, "the Response")
    done = wait_for_batch(client, batch.id)

    assert stack.status(submitted.id) == "completed"
    # The chunk offered its slot after its running line: the Response ran
    # before the chunk's next lines, not after all three.
    assert _started_at(stack, "hold-0") < _started_at(stack, "interactive")
    assert _started_at(stack, "interactive") < _started_at(stack, "line-1")
    assert done.status == "completed", done.errors
    output = lines_of(files, done.output_file_id)
    assert [line["custom_id"] for line in output] == ["req-0", "req-1", "req-2"]
    assert {line["response"]["status_code"] for line in output} == {200}


def test_a_background_response_starts_at_once_in_the_slot_kept_for_it(
    batch_stack: StackFactory, files: OpenAI
) -> None:
    stack = batch_stack(
        LGOS_BATCH_CONCURRENCY="1",
        LGOS_BATCH_LINES_PER_JOB="3",
        LGOS_BACKGROUND_CONCURRENCY="1",  # and one slot kept (the default)
    )
    input_file = upload_lines(files, ["hold-0", "line-1", "line-2"])
    stack.start_api()
    stack.start_worker()
    client = stack.client()
    batch = create_batch(client, input_file)
    wait_until(lambda: bool(pids_that_started(stack, "hold-0")), 120, "line 0")

    submitted = client.responses.create(
        model="work", input="interactive", background=True
    )
    # The batch's line still holds the only regular slot.
    wait_until(lambda: stack.status(submitted.id) in TERMINAL, 120, "the Response")
    line_1_meanwhile = bool(stack.markers_of("start", "line-1"))
    stack.release("hold")
    done = wait_for_batch(client, batch.id)

    assert stack.status(submitted.id) == "completed"
    assert not line_1_meanwhile  # the kept slot took no line
    assert done.status == "completed", done.errors
