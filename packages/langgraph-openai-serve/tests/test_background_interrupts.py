"""Interrupt runs as background Responses with the in-process backend (the
``background_client``, ``background_gate``, ``refund_steps`` and
``refund_saver`` fixtures of ``background_fixtures.py``): a run pauses and
resumes in the background; a stale resume is refused at submit, a second
resume (background or foreground) of a pause a queued resume holds is
``run_busy``; a resume whose pause went before its job started
ends with the conflict; and a run id is busy only in the tenant that uses
it."""

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


async def _paused(client):
    """A background refund run, paused on its question."""
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    return await await_response(client, submitted.id, {"completed"})


async def _resume(client, paused, verdict="approve", **options):
    """``paused`` answered with ``verdict`` (a background resume unless
    ``options`` say otherwise)."""
    options.setdefault("background", True)
    return await client.responses.create(
        model="refund",
        previous_response_id=paused.id,
        input=_answer(paused, verdict),
        **options,
    )


async def test_interrupt_runs_pause_and_resume_in_the_background(
    background_client, refund_steps
):
    paused = await _paused(background_client)
    resume = await _resume(background_client, paused)
    resumed = await await_response(background_client, resume.id, {"completed"})

    assert paused.output[0].name == "lgos_interrupt"
    assert resumed.output_text == "Refund approve."
    assert refund_steps["answer"] == 1


async def test_a_stale_background_resume_is_a_409_at_submit(
    background_client, refund_steps
):
    paused = await _paused(background_client)
    resume = await _resume(background_client, paused)
    await await_response(background_client, resume.id, {"completed"})

    with pytest.raises(openai.ConflictError) as stale:
        await _resume(background_client, paused)

    assert stale.value.body["code"] == "interrupt_state_conflict"
    assert refund_steps["answer"] == 1


@pytest.mark.parametrize(
    "second",
    [
        {"background": True},
        {"background": False},
        {"background": False, "stream": True},
    ],
    ids=["background", "foreground", "foreground-streamed"],
)
async def test_a_second_resume_of_a_pause_a_queued_resume_holds_is_run_busy(
    background_client, background_gate, refund_steps, second
):
    paused = await _paused(background_client)
    # The only slot runs a held job, so the resume below waits in the queue.
    blocker = await background_client.responses.create(
        model="gated", input="x", background=True
    )
    await background_gate.entered.wait()
    queued = await _resume(background_client, paused)

    # The accepted resume holds the pause: another one is refused at once,
    # not run ahead of it (which would fail the accepted one later).
    with pytest.raises(openai.ConflictError) as refused:
        await _resume(background_client, paused, "deny", **second)
    background_gate.release.set()
    await await_response(background_client, blocker.id, {"completed"})
    done = await await_response(background_client, queued.id, {"failed", "completed"})

    assert refused.value.body["code"] == "run_busy"
    assert done.status == "completed"
    assert done.output_text == "Refund approve."
    assert refund_steps["answer"] == 1


async def test_a_resume_whose_pause_went_before_its_job_started_ends_with_the_conflict(
    background_client, background_gate, refund_steps, refund_saver
):
    paused = await _paused(background_client)
    await background_client.responses.create(model="gated", input="x", background=True)
    await background_gate.entered.wait()
    # Accepted: the run is still paused and no other Response drives it ...
    late = await _resume(background_client, paused)
    # ... but the pause goes (the expiry sweep) before the job starts.
    run = run_id_from_response_id(paused.id, "default", "refund")
    await refund_saver.adelete_thread(checkpoint_key("default", "refund", run))
    background_gate.release.set()
    lost = await await_response(background_client, late.id, {"failed", "completed"})
    stream = await background_client.responses.retrieve(late.id, stream=True)
    events = [event async for event in stream]

    assert lost.status == "failed"
    assert lost.error.code == "interrupt_state_conflict"
    assert lost.error.message.startswith("The run has no pending interrupts")
    # A follower of the stream sees the same end.
    assert [event.type for event in events][-2:] == ["error", "response.failed"]
    assert events[0].type == "response.created"
    assert events[-1].response.error == lost.error
    assert refund_steps["answer"] == 0


async def test_another_tenants_run_id_is_free_and_ones_own_is_busy(
    background_client, background_gate
):
    """Whether a run id is in use tells nothing about another tenant's runs:
    bob may use the id of alice's queued run (it is another run), alice may
    not use it twice."""
    alice, bob = (
        background_client.with_options(default_headers={"x-tenant": tenant})
        for tenant in ("alice", "bob")
    )
    blocker = await background_client.responses.create(
        model="gated", input="x", background=True
    )
    await background_gate.entered.wait()
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
    background_gate.release.set()
    await await_response(background_client, blocker.id, {"completed"})
    ends = [
        await await_response(tenant, created.id, {"completed", "failed"})
        for tenant, created in ((alice, alices), (bob, bobs))
    ]

    assert again.value.body["code"] == "run_busy"
    assert bobs.status == "queued"
    # Each paused a run of its own.
    assert [end.output[0].name for end in ends] == ["lgos_interrupt"] * 2
