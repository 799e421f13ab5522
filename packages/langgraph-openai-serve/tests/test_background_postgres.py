"""Background Responses on PostgreSQL: an API process and worker processes
sharing procrastinate's queue, through the official SDK."""

from __future__ import annotations

import uuid

import httpx
import openai
import pytest
from background_stack import Stack
from lgos_testkit import wait_for_response, wait_until


@pytest.fixture
def stack(tmp_path, postgres_uri, bytecode_cache):
    started = Stack(tmp_path, postgres_uri, bytecode_cache)
    started.start_api()
    yield started
    started.stop()


def test_two_workers_share_the_queue_and_run_each_job_once(stack):
    stack.start_worker()
    stack.start_worker()
    client = stack.client()
    tags = [uuid.uuid4().hex[:8] for _ in range(8)]

    submitted = [
        client.responses.create(model="job", input=tag, background=True) for tag in tags
    ]
    done = [wait_for_response(client, s.id, {"completed", "failed"}) for s in submitted]

    assert [d.output_text for d in done] == [f"Finished {tag}." for tag in tags]
    for tag in tags:
        assert len(list(stack.markers.glob(f"run-{tag}-*"))) == 1


def test_an_api_restart_loses_nothing_and_streams_resume_from_any_process(stack):
    stack.start_worker()
    client = stack.client()
    submitted = client.responses.create(model="job", input="restart", background=True)
    done = wait_for_response(client, submitted.id, {"completed"})
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
    wait_until((stack.markers / "started-spin").exists, 60, "the forever run")

    client.responses.cancel(running.id)
    cancelled_running = wait_for_response(client, running.id, {"cancelled"})

    assert cancelled_queued.status == "cancelled"
    assert cancelled_running.status == "cancelled"
    assert (stack.markers / "cancelled-spin").exists()
    # The worker took the cancelled job off the queue (so it had its chance
    # to run it) without running its graph.
    wait_until(lambda: stack.job_done(queued.id), 60, "the cancelled job to be done")
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
    failed = wait_for_response(client, failing.id, {"failed"})
    wait_for_response(client, first.id, {"completed"})

    assert retry.id == first.id
    assert reused.value.body["code"] == "idempotency_key_reused"
    assert len(list(stack.markers.glob("run-idem-*"))) == 1
    assert failed.error.code == "server_error"
    assert "hunter2" not in failed.model_dump_json()
