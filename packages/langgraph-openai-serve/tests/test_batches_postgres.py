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
from batch_fixtures import FILES_KEYS
from lgos_testkit import FilesApi, WebhookReceiver, wait_for_batch, wait_until
from openai import OpenAI

LINES = 30
HELD = "hold-12"


SECRET = "whsec_" + base64.b64encode(b"lgos-webhook-postgres-test-key!!").decode()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as started:
        yield started


@pytest.fixture
def stack(tmp_path, postgres_uri, bytecode_cache, batch_env, receiver):
    env = {key: value for key, value in batch_env.items() if key != "LGOS_API_KEYS"}
    endpoints = [{"url": receiver.url, "scopes": ["default"]}]
    started = Stack(
        tmp_path,
        postgres_uri,
        bytecode_cache,
        LGOS_REGISTRY="batch_app:registry",
        LGOS_BATCH_CONCURRENCY="2",
        LGOS_BATCH_LINES_PER_JOB="5",
        LGOS_WORKER_SHUTDOWN_TIMEOUT="1",
        LGOS_WEBHOOK_ENDPOINTS=json.dumps(endpoints),
        LGOS_WEBHOOK_SECRET=SECRET,
        **env,
    )
    started.sql("TRUNCATE lgos_batches CASCADE")
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def files(files_api: FilesApi):
    key = next(k for k, owner in FILES_KEYS.items() if owner == "default")
    with OpenAI(base_url=files_api.openai_url, api_key=key, max_retries=0) as client:
        yield client


def _pids_that_started(stack: Stack, text: str) -> set[int]:
    return {int(path.name.split("-")[3]) for path in stack.markers_of("start", text)}


def test_killed_and_stopped_workers_lose_no_line_and_write_none_twice(
    stack: Stack, files: OpenAI, receiver: WebhookReceiver
) -> None:
    receiver.fail_next(500)  # the first delivery of batch.completed
    texts = [f"line-{i}" for i in range(LINES)]
    texts[12] = HELD
    lines = [
        {
            "custom_id": f"req-{i}",
            "method": "POST",
            "url": "/v1/responses",
            "body": {"model": "work", "input": text},
        }
        for i, text in enumerate(texts)
    ]
    upload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    input_file = files.files.create(file=("in.jsonl", upload), purpose="batch")
    stack.start_api()
    killed = stack.start_worker()
    client = stack.client()
    batch = client.batches.create(
        input_file_id=input_file.id, endpoint="/v1/responses", completion_window="24h"
    )

    # The first worker runs the held line, mid-graph, when it is killed.
    wait_until(lambda: bool(_pids_that_started(stack, HELD)), 120, HELD)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=10)
    stopped = stack.start_worker()
    # Its stalled chunk comes back to the next worker, which is SIGTERMed
    # while it holds the same line: it hands the chunk back.
    wait_until(lambda: stopped.pid in _pids_that_started(stack, HELD), 120, "rerun")
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=60) == 0
    last = stack.start_worker()
    wait_until(lambda: last.pid in _pids_that_started(stack, HELD), 120, "third run")
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
    output = [
        json.loads(line)
        for line in files.files.content(done.output_file_id or "").text.splitlines()
    ]
    written = Counter(line["custom_id"] for line in output)
    assert written == Counter(f"req-{i}" for i in range(LINES))
    assert [line["custom_id"] for line in output] == [f"req-{i}" for i in range(LINES)]
    held = next(line for line in output if line["custom_id"] == "req-12")
    assert held["response"]["body"]["output"][0]["content"][0]["text"] == (
        f"done: {HELD}"
    )
    # The held line ran in all three workers and was written once.
    assert _pids_that_started(stack, HELD) == {killed.pid, stopped.pid, last.pid}
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
