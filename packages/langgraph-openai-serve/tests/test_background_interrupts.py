"""Interrupt runs as background Responses with the in-process backend (the
``client``, ``gate``, ``runs`` and ``saver`` fixtures of
``background_fixtures.py``): a run pauses and resumes in the background; a
stale resume is refused at submit, a second resume of a queued one and a
foreground resume of a pause a queued resume holds are ``run_busy``; a resume
whose pause went before its job started ends with the conflict; and a run id
is busy only in the tenant that uses it."""

from __future__ import annotations

import uuid

import openai
import pytest
from langgraph_openai_serve.graph.checkpoint_keys import checkpoint_key
from langgraph_openai_serve.openai.responses.interrupt_ids import (
    run_id_from_response_id,
)
from lgos_testkit import await_response

pytestmark = pytest.mark.anyio


def _answer(paused, verdict="approve"):
    (call,) = paused.output
    return [
        {"type": "function_call_output", "call_id": call.call_id, "output": verdict}
    ]


async def test_interrupt_runs_pause_and_resume_in_the_background(client, runs):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    resume = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )
    resumed = await await_response(client, resume.id, {"completed"})

    assert paused.output[0].name == "lgos_interrupt"
    assert resumed.output_text == "Refund approve."
    assert runs["answer"] == 1


async def test_a_stale_background_resume_is_a_409_at_submit(client, runs):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    resume = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )
    await await_response(client, resume.id, {"completed"})

    with pytest.raises(openai.ConflictError) as stale:
        await client.responses.create(
            model="refund",
            background=True,
            previous_response_id=paused.id,
            input=_answer(paused),
        )

    assert stale.value.body["code"] == "interrupt_state_conflict"
    assert runs["answer"] == 1


async def test_a_second_background_resume_of_a_queued_one_is_run_busy(
    client, gate, runs
):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    blocker = await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    first = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )

    with pytest.raises(openai.ConflictError) as second:
        await client.responses.create(
            model="refund",
            background=True,
            previous_response_id=paused.id,
            input=_answer(paused, "deny"),
        )
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    done = await await_response(client, first.id, {"completed"})

    assert second.value.body["code"] == "run_busy"
    assert done.output_text == "Refund approve."
    assert runs["answer"] == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_a_foreground_resume_of_a_pause_a_queued_resume_holds_is_run_busy(
    client, gate, runs, stream
):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    # The only slot runs a held job, so the resume below waits in the queue.
    blocker = await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    queued = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )

    # The accepted resume holds the pause: another one is refused at once,
    # not run ahead of it (which would fail the accepted one later).
    with pytest.raises(openai.ConflictError) as refused:
        await client.responses.create(
            model="refund",
            previous_response_id=paused.id,
            input=_answer(paused, "deny"),
            stream=stream,
        )
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    done = await await_response(client, queued.id, {"failed", "completed"})

    assert refused.value.body["code"] == "run_busy"
    assert done.status == "completed"
    assert done.output_text == "Refund approve."
    assert runs["answer"] == 1


async def test_a_resume_whose_pause_went_before_its_job_started_ends_with_the_conflict(
    client, gate, runs, saver
):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    # Accepted: the run is still paused and no other Response drives it ...
    late = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )
    # ... but the pause goes (the expiry sweep) before the job starts.
    run = run_id_from_response_id(paused.id, "default", "refund")
    await saver.adelete_thread(checkpoint_key("default", "refund", run))
    gate.release.set()
    lost = await await_response(client, late.id, {"failed", "completed"})
    stream = await client.responses.retrieve(late.id, stream=True)
    events = [event async for event in stream]

    assert lost.status == "failed"
    assert lost.error.code == "interrupt_state_conflict"
    assert lost.error.message.startswith("The run has no pending interrupts")
    # A follower of the stream sees the same end.
    assert [event.type for event in events][-2:] == ["error", "response.failed"]
    assert events[0].type == "response.created"
    assert events[-1].response.error == lost.error
    assert runs["answer"] == 0


async def test_another_tenants_run_id_is_free_and_ones_own_is_busy(client, gate):
    """Whether a run id is in use tells nothing about another tenant's runs:
    bob may use the id of alice's queued run (it is another run), alice may
    not use it twice."""
    alice, bob = (
        client.with_options(default_headers={"x-tenant": tenant})
        for tenant in ("alice", "bob")
    )
    blocker = await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    named = {
        "model": "refund",
        "input": "Refund",
        "background": True,
        "metadata": {"lgos_run_id": str(uuid.uuid4())},
    }

    alices = await alice.responses.create(**named)
    bobs = await bob.responses.create(**named)
    with pytest.raises(openai.ConflictError) as again:
        await alice.responses.create(**named)
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    ends = [
        await await_response(tenant, created.id, {"completed", "failed"})
        for tenant, created in ((alice, alices), (bob, bobs))
    ]

    assert again.value.body["code"] == "run_busy"
    assert bobs.status == "queued"
    # Each paused a run of its own.
    assert [end.output[0].name for end in ends] == ["lgos_interrupt"] * 2
