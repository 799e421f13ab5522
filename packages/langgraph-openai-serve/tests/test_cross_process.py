"""One background run across three ``lgos serve`` processes on one
PostgreSQL: submitted on one, followed on a second, cancelled on a third; a
follower that re-attaches elsewhere sees every event once; idempotency keys
and tenants hold whichever process answers. (Interrupt leases across
processes: ``test_interrupts_multiprocess.py`` and the fault suite's racing
background resumes.)"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest
from background_stack import ApiProcess, Stack
from lgos_testkit import wait_for_response
from openai import OpenAI

KEYS = json.dumps({"sk-alpha": "tenant-a", "sk-beta": "tenant-b"})


@pytest.fixture(scope="module")
def apis(tmp_path_factory, postgres_uri, bytecode_cache):
    markers = tmp_path_factory.mktemp("cross-process")
    stack = Stack(markers, postgres_uri, bytecode_cache)
    try:
        started = [stack.spawn_api(LGOS_API_KEYS=KEYS) for _ in range(3)]
        stack.start_worker()
        for api in started:
            stack.wait_ready(api.process, api.port, "lgos serve")
        yield stack, started
    finally:
        stack.stop()


def _client(api: ApiProcess, key: str = "sk-alpha") -> OpenAI:
    return OpenAI(base_url=api.base_url, api_key=key, max_retries=0, timeout=60)


def _tag() -> str:
    return uuid.uuid4().hex[:10]


def test_submitted_on_one_followed_on_a_second_cancelled_on_a_third(apis):
    stack, (first, second, third) = apis
    tag = _tag()
    with _client(first) as a, _client(second) as b, _client(third) as c:
        submitted = a.responses.create(model="hold", input=tag, background=True)
        seen = []
        with b.responses.retrieve(submitted.id, stream=True) as stream:
            for event in stream:
                seen.append(event)
                if event.type == "response.in_progress":
                    cancelled = c.responses.cancel(submitted.id)
        # A cancelled run's stream ends without a terminal event; its
        # snapshot, from any process, says it ended.
        final = a.responses.retrieve(submitted.id)

    assert [e.sequence_number for e in seen] == list(range(len(seen)))
    assert [e.type for e in seen] == ["response.created", "response.in_progress"]
    assert cancelled.status in {"cancelled", "in_progress"}
    assert final.status == "cancelled"
    assert not stack.markers_of("done", tag)


def test_a_follower_reattaching_on_another_process_sees_every_event_once(apis):
    stack, (first, second, third) = apis
    tag = _tag()
    with _client(first) as a, _client(second) as b, _client(third) as c:
        submitted = a.responses.create(model="fleet", input=tag, background=True)
        seen = []
        with b.responses.retrieve(submitted.id, stream=True) as stream:
            for event in stream:
                seen.append(event)
                if event.type == "response.output_text.delta":
                    break  # the connection drops mid-answer
        with c.responses.retrieve(
            submitted.id, stream=True, starting_after=seen[-1].sequence_number
        ) as stream:
            seen.extend(stream)

    assert [e.sequence_number for e in seen] == list(range(len(seen)))
    assert seen[-1].type == "response.completed"
    deltas = [e.delta for e in seen if e.type == "response.output_text.delta"]
    assert "".join(deltas) == seen[-1].response.output_text
    assert len(stack.markers_of("done-answer", tag)) == 1


def test_an_idempotency_key_names_one_run_on_every_process_of_its_tenant(apis):
    stack, (first, second, third) = apis
    tag = _tag()

    def submit(api: ApiProcess, key: str = "sk-alpha", text: str = tag) -> str:
        with _client(api, key) as client:
            return client.responses.create(
                model="fleet",
                input=text,
                background=True,
                extra_headers={"Idempotency-Key": f"key-{tag}"},
            ).id

    with ThreadPoolExecutor(max_workers=2) as pool:
        racing = list(pool.map(submit, [first, second]))
    other_tenant = submit(third, key="sk-beta")
    with pytest.raises(openai.UnprocessableEntityError) as reused:
        submit(third, text="another body")
    with _client(third) as client:  # its tenant sees it on any process
        done = wait_for_response(client, racing[0], {"completed", "failed"})
    with _client(third, "sk-beta") as client:  # its run must end before counting
        wait_for_response(client, other_tenant, {"completed", "failed"})

    assert racing[0] == racing[1]
    assert other_tenant != racing[0]
    assert reused.value.body["code"] == "idempotency_key_reused"
    assert done.status == "completed"
    # The two racing submits made one run (the other tenant's made its own).
    assert len(stack.markers_of("done-answer", tag)) == 2


def test_another_tenant_gets_404_for_a_run_on_every_process(apis):
    _, (first, second, third) = apis
    with _client(first) as owner:
        submitted = owner.responses.create(model="fleet", input=_tag(), background=True)
    for api in (first, second, third):
        with _client(api, "sk-beta") as stranger:
            with pytest.raises(openai.NotFoundError):
                stranger.responses.retrieve(submitted.id)
            with pytest.raises(openai.NotFoundError):
                stranger.responses.cancel(submitted.id)
            with pytest.raises(openai.NotFoundError):
                stranger.responses.retrieve(submitted.id, stream=True)
