"""Interrupts: a pause becomes an lgos_interrupt call, resumed by its answer."""

from __future__ import annotations

import asyncio
import datetime
import json

import approval_client
import openai
import pytest
from conftest import expected_output
from langgraph_openai_serve import delete_expired_interrupt_runs


def test_pause_resume_and_a_second_answer_conflicts(serve, capsys):
    server = serve("approval_app")

    approval_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("approval_client.out")


def test_any_text_answers_the_interrupt(serve):
    client = serve("approval_app").client()
    paused = client.responses.create(model="refunds", input="Order 7")
    (call,) = paused.output

    resumed = client.responses.create(
        model="refunds",
        previous_response_id=paused.id,
        input=[
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": "only half",
            }
        ],
    )

    assert json.loads(call.arguments)["choices"] == ["approve", "reject"]
    assert resumed.output_text == "The refund was not approved (only half)."


def test_chat_completions_refuse_interrupt_graphs(serve):
    client = serve("approval_app").client()

    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="refunds", messages=[{"role": "user", "content": "Order 9"}]
        )


def test_expired_pauses_are_deleted_and_cannot_be_resumed(serve):
    server = serve("approval_app")
    client = server.client()
    paused = client.responses.create(model="refunds", input="Order 8")
    (call,) = paused.output
    checkpointer = server.module.checkpointer
    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=2)

    deleted = asyncio.run(
        delete_expired_interrupt_runs(
            checkpointer, older_than=datetime.timedelta(days=1), now=later
        )
    )

    assert deleted == 1
    with pytest.raises(openai.ConflictError) as conflict:
        client.responses.create(
            model="refunds",
            previous_response_id=paused.id,
            input=[
                {"type": "function_call_output", "call_id": call.call_id, "output": "x"}
            ],
        )
    assert conflict.value.code == "interrupt_state_conflict"


def _answered_turn(client):
    paused = client.responses.create(model="refunds", input="Order 5")
    (call,) = paused.output
    answer = {"type": "function_call_output", "call_id": call.call_id}
    return [
        {"role": "user", "content": "Order 5"},
        *[item.to_dict() for item in paused.output],
        {**answer, "output": "approve"},
    ], paused


def test_answered_interrupts_replay_as_history_before_a_new_message(serve):
    client = serve("approval_app").client()
    history, paused = _answered_turn(client)
    resumed = client.responses.create(
        model="refunds", previous_response_id=paused.id, input=history[-1:]
    )

    later = client.responses.create(
        model="refunds",
        input=[
            *history,
            *[item.to_dict() for item in resumed.output],
            {"role": "user", "content": "Order 6"},
        ],
    )

    (call,) = later.output
    assert call.name == "lgos_interrupt"
    assert "Order 6" in json.loads(call.arguments)["question"]


def test_an_input_ending_with_answers_needs_previous_response_id(serve):
    client = serve("approval_app").client()
    history, _paused = _answered_turn(client)

    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="refunds", input=history)

    assert refused.value.body["param"] == "previous_response_id"
