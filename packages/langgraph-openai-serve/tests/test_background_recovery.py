"""No background run is lost: worker stops, worker crashes, cancels of runs
whose worker is gone, and enqueues that fail, with real ``lgos`` processes on
real PostgreSQL."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from background_stack import Stack, terminate
from langgraph_openai_serve.graph.durable import durable_thread_id
from lgos_testkit import wait_until


@pytest.fixture
def make_stack(tmp_path, postgres_uri, bytecode_cache):
    stacks: list[Stack] = []

    def make(**env: str) -> Stack:
        stack = Stack(tmp_path, postgres_uri, bytecode_cache, **env)
        stacks.append(stack)
        stack.start_api()
        return stack

    yield make
    for stack in stacks:
        stack.stop()


def _tag() -> str:
    return uuid.uuid4().hex[:8]


def test_sigterm_lets_a_running_job_finish_and_the_worker_exit(make_stack):
    stack = make_stack(LGOS_WORKER_SHUTDOWN_TIMEOUT="60")
    worker = stack.start_worker()
    tag = _tag()
    submitted = stack.client().responses.create(
        model="hold", input=tag, background=True
    )
    stack.wait_marker("started", tag)

    terminate(worker)
    stack.release(tag)
    exit_code = worker.wait(timeout=60)
    done = stack.wait_status(submitted.id, {"completed", "failed"})

    assert exit_code == 0
    assert done.output_text == f"Held {tag}."
    assert len(stack.markers_of("started", tag)) == 1


def test_sigterm_hands_an_unfinished_job_back_and_another_worker_runs_it(
    make_stack,
):
    stack = make_stack(LGOS_WORKER_SHUTDOWN_TIMEOUT="0.5")
    worker = stack.start_worker()
    tag = _tag()
    client = stack.client()
    submitted = client.responses.create(model="hold", input=tag, background=True)
    first = stack.wait_marker("started", tag)

    terminate(worker)
    exit_code = worker.wait(timeout=60)
    handed_back = client.responses.retrieve(submitted.id)
    stack.start_worker()
    second = _second_start(stack, tag, first)
    stack.release(tag)
    done = stack.wait_status(submitted.id, {"completed", "failed"})

    assert exit_code == 0
    assert handed_back.status == "queued"
    assert second != first
    assert done.output_text == f"Held {tag}."


def test_a_stopping_worker_keeps_heartbeating_so_its_run_is_not_run_twice(
    make_stack,
):
    # The graceful wait is far longer than the stalled timeout (5 s here).
    stack = make_stack(LGOS_WORKER_SHUTDOWN_TIMEOUT="120")
    stopping = stack.start_worker()
    tag = _tag()
    submitted = stack.client().responses.create(
        model="hold", input=tag, background=True
    )
    stack.wait_marker("started", tag)
    ((worker_id,),) = stack.sql(
        "SELECT worker_id FROM procrastinate_jobs WHERE lock = %s", (submitted.id,)
    )
    stack.start_worker()  # sweeps for stalled jobs every half second

    terminate(stopping)
    ((signalled,),) = stack.sql("SELECT now()")

    def heartbeat_past_the_stalled_timeout() -> bool:
        rows = stack.sql(
            "SELECT last_heartbeat > %s + interval '6 seconds' "
            "FROM procrastinate_workers WHERE id = %s",
            (signalled, worker_id),
        )
        return bool(rows and rows[0][0])

    # procrastinate's own heartbeat stops with the worker: without LGOS's the
    # other worker would count this one dead and start the run again.
    wait_until(heartbeat_past_the_stalled_timeout, 60, "a heartbeat while stopping")
    stack.release(tag)
    exit_code = stopping.wait(timeout=60)
    done = stack.wait_status(submitted.id, {"completed", "failed"})

    assert exit_code == 0
    assert done.output_text == f"Held {tag}."
    assert len(stack.markers_of("started", tag)) == 1


def _second_start(stack: Stack, tag: str, first: Path) -> Path:
    wait_until(lambda: len(stack.markers_of("started", tag)) >= 2, 60, "a second start")
    (second,) = [p for p in stack.markers_of("started", tag) if p != first]
    return second


def test_a_killed_workers_job_runs_again_on_a_live_worker(make_stack):
    stack = make_stack()
    doomed = stack.start_worker()
    tag = _tag()
    submitted = stack.client().responses.create(
        model="hold", input=tag, background=True
    )
    first = stack.wait_marker("started", tag)

    doomed.kill()
    doomed.wait(timeout=10)
    stack.start_worker()
    _second_start(stack, tag, first)
    stack.release(tag)
    done = stack.wait_status(submitted.id, {"completed", "failed"})

    assert done.output_text == f"Held {tag}."


def _checkpoints(stack: Stack, response_id: str) -> int:
    """How many checkpoints the durable run of ``response_id`` has stored."""
    ((scope,),) = stack.sql(
        "SELECT scope FROM lgos_background_responses WHERE id = %s", (response_id,)
    )
    thread = durable_thread_id(scope, "steps", response_id)
    ((count,),) = stack.sql(
        "SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)
    )
    return int(count)


def test_a_handed_back_run_resumes_after_its_completed_node_and_its_stream_goes_on(
    make_stack,
):
    stack = make_stack(LGOS_WORKER_SHUTDOWN_TIMEOUT="0.5")
    worker = stack.start_worker()
    tag = _tag()
    client = stack.client()
    submitted = client.responses.create(model="steps", input=tag, background=True)
    stack.wait_marker("enter-second", tag)

    terminate(worker)
    exit_code = worker.wait(timeout=60)
    saved = _checkpoints(stack, submitted.id)
    stack.start_worker()
    wait_until(
        lambda: len(stack.markers_of("enter-second", tag)) >= 2, 60, "the re-run"
    )
    stack.release("all")
    done = stack.wait_status(submitted.id, {"completed", "failed"})
    with client.responses.retrieve(submitted.id, stream=True) as stream:
        events = list(stream)

    assert exit_code == 0
    assert saved > 0  # the completed first node is checkpointed in PostgreSQL
    assert done.output_text == f"Both steps of {tag}."
    assert len(stack.markers_of("enter-first", tag)) == 1
    assert len(stack.markers_of("done-second", tag)) == 1
    assert _checkpoints(stack, submitted.id) == 0  # gone once it completed
    # The follower's view: one stream whose sequence numbers go on across the
    # re-run, which starts with its own response.in_progress.
    assert [e.sequence_number for e in events] == list(range(len(events)))
    types = [e.type for e in events]
    assert types.count("response.created") == 1
    assert types.count("response.in_progress") == 2
    assert types[-1] == "response.completed"
    rerun = types.index("response.in_progress", types.index("response.in_progress") + 1)
    deltas = [e.delta for e in events[rerun:] if e.type == "response.output_text.delta"]
    assert "".join(deltas) == f"Both steps of {tag}."


def test_a_run_that_keeps_killing_its_workers_fails_after_max_attempts(make_stack):
    stack = make_stack(LGOS_BACKGROUND_MAX_ATTEMPTS="2")
    for _ in range(3):
        stack.start_worker()
    tag = _tag()
    submitted = stack.client().responses.create(
        model="crash", input=tag, background=True
    )

    failed = stack.wait_status(submitted.id, {"failed", "completed"}, timeout=120)

    assert failed.status == "failed"
    assert failed.error.code == "server_error"
    assert "interrupted 2 times" in failed.error.message
    assert len(stack.markers_of("started", tag)) == 2


def test_cancel_of_a_run_whose_worker_is_gone_ends_it_cancelled(make_stack):
    stack = make_stack()
    worker = stack.start_worker()
    tag = _tag()
    client = stack.client()
    submitted = client.responses.create(model="hold", input=tag, background=True)
    stack.wait_marker("started", tag)

    worker.kill()
    worker.wait(timeout=10)
    answers: list[str] = []

    def cancelled() -> bool:
        answers.append(str(client.responses.cancel(submitted.id).status))
        return answers[-1] == "cancelled"

    # Until the worker's heartbeat is older than the stalled timeout, a live
    # worker may still hold it; from then on the cancel ends it at once.
    wait_until(cancelled, 60, "the cancel to take effect", 0.5)

    assert set(answers) <= {"in_progress", "cancelled"}
    assert client.responses.retrieve(submitted.id).status == "cancelled"


def test_a_failing_enqueue_stores_nothing_and_the_retry_runs(make_stack):
    stack = make_stack()
    # Real fault injection: the queue insert fails once, inside the
    # transaction that stores the Response.
    stack.sql(
        # A sequence, because a rollback does not undo nextval().
        "CREATE SEQUENCE lgos_test_fail_once;"
        "CREATE OR REPLACE FUNCTION lgos_test_fail_enqueue() RETURNS trigger "
        "LANGUAGE plpgsql AS $$ BEGIN "
        "IF nextval('lgos_test_fail_once') = 1 THEN "
        "RAISE EXCEPTION 'injected enqueue failure'; END IF; RETURN NEW; END $$;"
        "CREATE TRIGGER lgos_test_fail_enqueue BEFORE INSERT ON procrastinate_jobs "
        "FOR EACH ROW EXECUTE FUNCTION lgos_test_fail_enqueue()"
    )
    try:
        tag = _tag()
        body = {"model": "job", "input": tag, "background": True}
        headers = {"Idempotency-Key": f"key-{tag}"}

        failed = httpx.post(
            f"{stack.base_url}/responses", json=body, headers=headers, timeout=30
        )
        stored_after_failure = stack.sql(
            "SELECT count(*) FROM lgos_background_responses WHERE idempotency_key = %s",
            (f"key-{tag}",),
        )
        retry = httpx.post(
            f"{stack.base_url}/responses", json=body, headers=headers, timeout=30
        )
    finally:
        stack.sql(
            "DROP TRIGGER IF EXISTS lgos_test_fail_enqueue ON procrastinate_jobs;"
            "DROP SEQUENCE IF EXISTS lgos_test_fail_once"
        )
    stack.start_worker()
    done = stack.wait_status(retry.json()["id"], {"completed", "failed"})

    assert failed.status_code == 500
    assert stored_after_failure == [(0,)]
    assert retry.status_code == 200
    assert done.output_text == f"Finished {tag}."


def test_an_idempotent_retry_requeues_a_job_that_went_missing(make_stack):
    stack = make_stack()
    tag = _tag()
    client = stack.client()
    headers = {"Idempotency-Key": f"key-{tag}"}
    submitted = client.responses.create(
        model="job", input=tag, background=True, extra_headers=headers
    )
    # The queue loses the job (an operator's cleanup, a restored backup...).
    stack.sql("DELETE FROM procrastinate_jobs WHERE lock = %s", (submitted.id,))

    retry = client.responses.create(
        model="job", input=tag, background=True, extra_headers=headers
    )
    jobs = stack.sql(
        "SELECT status FROM procrastinate_jobs WHERE lock = %s", (submitted.id,)
    )
    stack.start_worker()
    done = stack.wait_status(submitted.id, {"completed", "failed"})

    assert retry.id == submitted.id
    assert jobs == [("todo",)]
    assert done.output_text == f"Finished {tag}."
