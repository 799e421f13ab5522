"""Batches on PostgreSQL run by real ``lgos worker`` processes: a worker
SIGKILLed and another SIGTERMed mid-batch lose no line and write none twice,
and the batch's webhook survives a worker killed between two attempts.
"""

from __future__ import annotations

import base64
import json
import signal
from collections import Counter
from collections.abc import Iterator

import pytest
from background_stack import Stack
from batch_stack import (
    StackFactory,
    create_batch,
    lines_of,
    pids_that_started,
    upload_lines,
)
from lgos_testkit import WebhookReceiver, wait_for_batch, wait_until
from openai import OpenAI

LINES = 30
HELD = "hold-12"


SECRET = "whsec_" + base64.b64encode(b"lgos-webhook-postgres-test-key!!").decode()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as started:
        yield started


@pytest.fixture
def stack(batch_stack: StackFactory, receiver: WebhookReceiver) -> Stack:
    endpoints = [{"url": receiver.url, "scopes": ["default"]}]
    return batch_stack(
        LGOS_BATCH_CONCURRENCY="2",
        LGOS_BATCH_LINES_PER_JOB="5",
        LGOS_WEBHOOK_ENDPOINTS=json.dumps(endpoints),
        LGOS_WEBHOOK_SECRET=SECRET,
    )


def test_killed_and_stopped_workers_lose_no_line_and_write_none_twice(
    stack: Stack, files: OpenAI, receiver: WebhookReceiver
) -> None:
    receiver.fail_next(500)  # the first delivery of batch.completed
    texts = [f"line-{i}" for i in range(LINES)]
    texts[12] = HELD
    input_file = upload_lines(files, texts)
    stack.start_api()
    killed = stack.start_worker()
    client = stack.client()
    batch = create_batch(client, input_file)

    # The first worker runs the held line, mid-graph, when it is killed.
    wait_until(lambda: bool(pids_that_started(stack, HELD)), 120, HELD)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=10)
    stopped = stack.start_worker()
    # Its stalled chunk comes back to the next worker, which is SIGTERMed
    # while it holds the same line: it hands the chunk back.
    wait_until(lambda: stopped.pid in pids_that_started(stack, HELD), 120, "rerun")
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=60) == 0
    last = stack.start_worker()
    wait_until(lambda: last.pid in pids_that_started(stack, HELD), 120, "third run")
    (stack.markers / "release-hold").touch()
    done = wait_for_batch(client, batch.id)

    assert done.status == "completed", done.errors
    assert done.request_counts is not None
    assert done.request_counts.model_dump() == {
        "total": LINES,
        "completed": LINES,
        "failed": 0,
    }
    assert done.error_file_id is None
    output = lines_of(files, done.output_file_id)
    written = Counter(line["custom_id"] for line in output)
    assert written == Counter(f"req-{i}" for i in range(LINES))
    assert [line["custom_id"] for line in output] == [f"req-{i}" for i in range(LINES)]
    held = next(line for line in output if line["custom_id"] == "req-12")
    assert held["response"]["body"]["output"][0]["content"][0]["text"] == (
        f"done: {HELD}"
    )
    # The held line ran in all three workers and was written once.
    assert pids_that_started(stack, HELD) == {killed.pid, stopped.pid, last.pid}
    assert not stack.sql(
        "SELECT 1 FROM lgos_batch_lines WHERE batch_id = %s", (batch.id,)
    )

    # batch.completed: its first delivery failed; the worker that made it is
    # killed before the retry, which the next worker sends, same webhook-id.
    wait_until(lambda: bool(receiver.received), 60, "the first delivery")
    last.send_signal(signal.SIGKILL)
    last.wait(timeout=10)
    stack.start_worker()
    [delivered] = receiver.wait_for(1)
    failed_first = receiver.received[0]
    assert failed_first.status == 500
    assert delivered.headers["webhook-id"] == failed_first.headers["webhook-id"]
    event = OpenAI(api_key="x").webhooks.unwrap(
        delivered.body, delivered.headers, secret=SECRET
    )
    assert (event.type, event.data.id) == ("batch.completed", batch.id)
