"""Background Responses on PostgreSQL: an API process and worker processes
sharing procrastinate's queue, through the official SDK."""

from __future__ import annotations

import time
import uuid

import httpx
import openai
import pytest
from background_stack import Stack
from openai import OpenAI

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def stack(tmp_path, postgres_uri, bytecode_cache):
    started = Stack(tmp_path, postgres_uri, bytecode_cache)
    started.start_api()
    yield started
    started.stop()


def _wait(client: OpenAI, response_id: str, statuses: set[str], seconds: float = 60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        response = client.responses.retrieve(response_id)
        if response.status in statuses:
            return response
        time.sleep(0.1)
    raise AssertionError(f"{response_id} stayed {response.status}")


def test_two_workers_share_the_queue_and_run_each_job_once(stack):
    stack.start_worker()
    stack.start_worker()
    client = stack.client()
    tags = [uuid.uuid4().hex[:8] for _ in range(8)]

    submitted = [
        client.responses.create(model="job", input=tag, background=True) for tag in tags
    ]
    done = [_wait(client, s.id, {"completed", "failed"}) for s in submitted]

    assert [d.output_text for d in done] == [f"Finished {tag}." for tag in tags]
    for tag in tags:
        assert len(list(stack.markers.glob(f"run-{tag}-*"))) == 1


def test_an_api_restart_loses_nothing_and_streams_resume_from_any_process(stack):
    stack.start_worker()
    client = stack.client()
    submitted = client.responses.create(model="job", input="restart", background=True)
    done = _wait(client, submitted.id, {"completed"})
    full = httpx.get(
        f"{stack.base_url}/responses/{submitted.id}", params={"stream": "true"}
    )

    stack.stop_api()
    stack.start_api()
    again = stack.client().responses.retrieve(submitted.id)
    resumed = httpx.get(
        f"{stack.base_url}/responses/{submitted.id}",
        params={"stream": "true", "starting_after": 4},
    )

    assert again.output_text == done.output_text == "Finished restart."
    full_events = [f for f in full.text.split("\n\n") if f.startswith("event:")]
    resumed_events = [f for f in resumed.text.split("\n\n") if f.startswith("event:")]
    assert resumed_events == full_events[5:]


def test_cancel_while_queued_and_while_running(stack):
    client = stack.client()
    queued = client.responses.create(model="job", input="never-runs", background=True)
    cancelled_queued = client.responses.cancel(queued.id)
    stack.start_worker()
    running = client.responses.create(model="forever", input="spin", background=True)
    deadline = time.monotonic() + 30
    while not (stack.markers / "started-spin").exists():
        assert time.monotonic() < deadline, "the forever run never started"
        time.sleep(0.05)

    client.responses.cancel(running.id)
    cancelled_running = _wait(client, running.id, {"cancelled"}, seconds=15)

    assert cancelled_queued.status == "cancelled"
    assert cancelled_running.status == "cancelled"
    assert (stack.markers / "cancelled-spin").exists()
    time.sleep(0.5)
    assert not list(stack.markers.glob("run-never-runs-*"))
    assert client.responses.retrieve(queued.id).status == "cancelled"


def test_idempotent_retries_and_failures_on_postgres(stack):
    stack.start_worker()
    client = stack.client()
    headers = {"Idempotency-Key": "nightly-report"}

    first = client.responses.create(
        model="job", input="idem", background=True, extra_headers=headers
    )
    retry = client.responses.create(
        model="job", input="idem", background=True, extra_headers=headers
    )
    with pytest.raises(openai.UnprocessableEntityError) as reused:
        client.responses.create(
            model="job", input="other", background=True, extra_headers=headers
        )
    failing = client.responses.create(model="boom", input="x", background=True)
    failed = _wait(client, failing.id, {"failed"})
    _wait(client, first.id, {"completed"})

    assert retry.id == first.id
    assert reused.value.body["code"] == "idempotency_key_reused"
    assert len(list(stack.markers.glob("run-idem-*"))) == 1
    assert failed.error.code == "server_error"
    assert "hunter2" not in failed.model_dump_json()
