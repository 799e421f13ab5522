"""``interrupts``: a refund approval pauses, is resumed with a decision and
answers — with its checkpoints in the stack's PostgreSQL."""

from __future__ import annotations

import json
import time

import openai
import psycopg
import pytest
from demo_support import drain

REQUEST = "Please refund order 42, it arrived broken."


def _threads(url: str) -> int:
    """How many runs have checkpoints in PostgreSQL."""
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints")
        result = row.fetchone()
    assert result is not None
    return int(result[0])


def _answer(paused, output: str) -> list[dict[str, str]]:
    (call,) = [item for item in paused.output if item.type == "function_call"]
    return [{"type": "function_call_output", "call_id": call.call_id, "output": output}]


def test_pause_then_approve_answers_and_clears_the_checkpoints(api, stack):
    before = _threads(stack.database_url)

    paused = api.responses.create(model="interrupts", input=REQUEST)
    during = _threads(stack.database_url)
    resumed = api.responses.create(
        model="interrupts",
        previous_response_id=paused.id,
        input=_answer(paused, "approve"),
    )

    (call,) = paused.output
    assert (paused.status, call.type, call.name) == (
        "completed",
        "function_call",
        "lgos_interrupt",
    )
    payload = json.loads(call.arguments)
    assert payload["choices"] == ["approve", "reject"]
    assert payload["allow_other"] is True
    assert REQUEST in payload["question"]
    assert during == before + 1
    assert resumed.previous_response_id == paused.id
    assert "Reviewer decision: approve. The refund was approved" in resumed.output_text
    assert _threads(stack.database_url) == before

    with pytest.raises(openai.ConflictError) as replay:
        api.responses.create(
            model="interrupts",
            previous_response_id=paused.id,
            input=_answer(paused, "approve"),
        )
    assert replay.value.body["code"] == "interrupt_state_conflict"


def test_streamed_pause_and_a_free_text_answer(api):
    pause_events, paused = drain(
        api.responses.create(model="interrupts", input=REQUEST, stream=True)
    )
    done = [e.item for e in pause_events if e.type == "response.output_item.done"]

    events, final = drain(
        api.responses.create(
            model="interrupts",
            previous_response_id=paused.id,
            input=_answer(paused, "refund half of it"),
            stream=True,
        )
    )

    assert [(item.type, item.name) for item in done] == [
        ("function_call", "lgos_interrupt")
    ]
    text = final.output_text
    streamed = "".join(
        e.delta for e in events if e.type == "response.output_text.delta"
    )
    assert streamed == text
    assert "The reviewer answered “refund half of it”" in text


def _wait(api, response_id: str, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while True:
        response = api.responses.retrieve(response_id)
        if response.status not in {"queued", "in_progress"}:
            return response
        assert time.monotonic() < deadline, f"{response_id} stayed {response.status}"
        time.sleep(0.1)


def test_the_worker_pauses_and_resumes_background_runs(api):
    submitted = api.responses.create(model="interrupts", input=REQUEST, background=True)
    paused = _wait(api, submitted.id)
    resume = api.responses.create(
        model="interrupts",
        previous_response_id=paused.id,
        input=_answer(paused, "reject"),
        background=True,
    )
    resumed = _wait(api, resume.id)

    assert (paused.status, paused.output[0].name) == ("completed", "lgos_interrupt")
    assert resumed.status == "completed"
    assert "The refund was rejected" in resumed.output_text


def test_chat_completions_cannot_pause_so_the_model_is_refused(api):
    with pytest.raises(openai.BadRequestError) as caught:
        api.chat.completions.create(
            model="interrupts", messages=[{"role": "user", "content": REQUEST}]
        )

    assert caught.value.body["param"] == "model"
