"""Interrupts: the pause is saved before the question, survives a reload,
resumes with previous_response_id, and a refused resume is explained."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from lgos_chainlit.events import AnswerDelta, InterruptAsked, Notice, TurnFinished
from lgos_chainlit.interrupts import (
    AnswerError,
    InterruptPrompt,
    PendingInterrupt,
    explain_rejection,
    parse_prompt,
)
from lgos_chainlit.ledger import function_output, user_message
from ui_lgos_app import GATE_QUESTION, REFUND_QUESTION
from ui_support import collect

pytestmark = pytest.mark.anyio


def _answer(events) -> str:
    return "".join(e.text for e in events if isinstance(e, AnswerDelta))


async def test_the_pause_is_saved_before_the_question_is_asked(
    make_conversation, store, thread_id
):
    chat = await make_conversation("refund")

    asked = None
    async for event in chat.send("Refund order 7"):
        if isinstance(event, InterruptAsked):
            asked = event
            saved = store.load(thread_id)
            assert saved is not None
            assert saved.pending is not None
            break

    assert asked is not None
    assert asked.prompt == InterruptPrompt(
        call_id=asked.prompt.call_id,
        question="How should the refund be handled?",
        choices=("approve", "reject"),
        allow_other=True,
    )
    (call,) = saved.pending.calls
    assert saved.pending.response_id.startswith("resp_")
    assert (call["type"], call["name"]) == ("function_call", "lgos_interrupt")
    assert call["call_id"] == asked.prompt.call_id
    assert json.loads(call["arguments"]) == REFUND_QUESTION
    # The unanswered call waits in the pause, not in the replayed ledger.
    assert [item["type"] for item in saved.items] == ["message", "message"]


async def test_a_reloaded_chat_answers_with_previous_response_id(
    make_conversation, recorder, store, thread_id
):
    first = await make_conversation("refund")
    await collect(first.send("Refund order 7"))
    pending = store.load(thread_id).pending

    reloaded = await make_conversation("refund")
    (asked,) = await collect(reloaded.ask_pending())
    events = await collect(reloaded.answer(asked.prompt.call_id, "approve"))

    resume = recorder.bodies[-1]
    assert resume["previous_response_id"] == pending.response_id
    assert resume["input"] == [function_output(pending.calls[0]["call_id"], "approve")]
    assert resume["metadata"] == {"conversation_id": thread_id}
    assert _answer(events) == "Refund approve."
    saved = store.load(thread_id)
    assert saved.pending is None
    assert [item.get("type") for item in saved.items] == [
        "message",  # the user
        "message",  # commentary before the pause
        "function_call",
        "function_call_output",
        "message",  # commentary again: the interrupted node restarts
        "message",  # the answer
    ]
    assert saved.items[2] == pending.calls[0]


async def test_answered_interrupts_replay_in_later_turns(make_conversation, recorder):
    chat = await make_conversation("refund")
    (asked,) = [
        e for e in await collect(chat.send("one")) if isinstance(e, InterruptAsked)
    ]
    await collect(chat.answer(asked.prompt.call_id, "reject"))

    events = await collect(chat.send("two"))

    body = recorder.bodies[-1]
    assert "previous_response_id" not in body
    assert body["input"][-1] == user_message("two")
    assert [i.get("type") for i in body["input"]].count("function_call_output") == 1
    assert any(isinstance(e, InterruptAsked) for e in events)


async def test_free_text_is_accepted_only_when_the_question_allows_it(
    make_conversation,
):
    chat = await make_conversation("approvals")
    asked = [
        e
        for e in await collect(chat.send("approve it"))
        if isinstance(e, InterruptAsked)
    ]
    (manager,) = asked
    assert (manager.prompt.question, manager.remaining) == ("Manager approval?", 2)

    refused = await collect(chat.answer(manager.prompt.call_id, "maybe", typed=True))
    assert isinstance(refused[0], Notice)
    assert "choose one of: yes, no" in refused[0].text
    assert refused[1] == manager

    (finance,) = await collect(chat.answer(manager.prompt.call_id, "yes"))
    assert finance.prompt.question == "Finance comment?"
    assert finance.prompt.free_text
    assert finance.remaining == 1

    events = await collect(
        chat.answer(finance.prompt.call_id, "fine by me", typed=True)
    )
    assert _answer(events) == "manager=yes finance=fine by me"


async def test_a_stale_resume_is_explained_and_the_pause_dropped(
    make_conversation, store, thread_id, tmp_path
):
    chat = await make_conversation("refund")
    await collect(chat.send("Refund order 7"))
    stale_copy = tmp_path / "stale.json"
    shutil.copy(store.path(thread_id), stale_copy)
    (asked,) = await collect(chat.ask_pending())
    await collect(chat.answer(asked.prompt.call_id, "approve"))

    shutil.copy(stale_copy, store.path(thread_id))  # e.g. a second tab
    stale = await make_conversation("refund")
    events = await collect(stale.answer(asked.prompt.call_id, "reject"))

    (notice,) = events
    assert notice.level == "error"
    assert "no longer has this question pending" in notice.text
    assert store.load(thread_id).pending is None
    assert len(stale.ledger) == 2  # the never-answered call was not committed


async def test_a_busy_run_is_explained_and_can_be_answered_again(
    make_conversation, thread_id, store
):
    chat = await make_conversation("refund")
    await collect(chat.send("Refund order 7"))
    (asked,) = await collect(chat.ask_pending())
    first, second = [await make_conversation("refund") for _ in range(2)]

    results = await asyncio.gather(
        collect(first.answer(asked.prompt.call_id, "wait", typed=True)),
        collect(second.answer(asked.prompt.call_id, "wait", typed=True)),
    )

    done, busy = sorted(results, key=lambda events: isinstance(events[0], Notice))
    assert _answer(done) == "Refund wait."
    notice, again = busy
    assert "busy" in notice.text
    assert notice.level == "error"
    assert isinstance(again, InterruptAsked)
    assert again.prompt == asked.prompt
    loser = first if busy is results[0] else second
    assert loser.state.pending is not None
    assert loser.state.pending.answers == {}


def test_prompts_tolerate_payloads_without_a_question():
    call = {"call_id": "c", "arguments": json.dumps({"amount": 3})}

    prompt = parse_prompt(call)

    assert prompt == InterruptPrompt(call_id="c", question='{"amount": 3}')
    assert prompt.free_text


def test_every_call_needs_an_answer_before_outputs_are_built():
    pending = PendingInterrupt(
        response_id="resp_1",
        calls=[
            {"call_id": "a", "arguments": json.dumps({"question": "A?"})},
            {"call_id": "b", "arguments": json.dumps({"question": "B?"})},
        ],
    )
    pending.answer("a", "x", typed=True)

    with pytest.raises(AnswerError, match="unanswered"):
        pending.outputs()
    with pytest.raises(AnswerError, match="already answered"):
        pending.answer("a", "y", typed=True)
    with pytest.raises(AnswerError, match="not pending"):
        pending.answer("zzz", "y", typed=True)
    assert PendingInterrupt.from_json(pending.to_json()) == pending


def test_other_refusals_name_their_status_and_code():
    assert explain_rejection(400, "invalid_value", "bad") == (
        "The answer was refused (HTTP 400, invalid_value): bad"
    )
    assert (
        explain_rejection(0, None, "offline")
        == "The answer was refused (HTTP 0): offline"
    )
    assert TurnFinished  # imported for the event vocabulary


async def test_an_mcp_approval_request_is_asked_and_approved(
    make_conversation, recorder, store, thread_id
):
    chat = await make_conversation("gate")
    (asked,) = [
        e
        for e in await collect(chat.send("Refund order 7"))
        if isinstance(e, InterruptAsked)
    ]
    pending = store.load(thread_id).pending

    events = await collect(chat.answer(asked.prompt.call_id, "approve"))

    (request,) = pending.calls
    assert request["type"] == "mcp_approval_request"
    assert asked.prompt.call_id == request["id"]
    assert asked.prompt.question == GATE_QUESTION["question"]
    assert asked.prompt.choices == ("approve", "reject")
    assert not asked.prompt.free_text
    resume = recorder.bodies[-1]
    assert resume["previous_response_id"] == pending.response_id
    assert resume["input"] == [
        {
            "type": "mcp_approval_response",
            "approval_request_id": request["id"],
            "approve": True,
        }
    ]
    # An approval resumes the interrupt with its own payload.
    assert _answer(events) == "Refunded 19.90 EUR."
    later = await collect(chat.send("Thanks"))
    assert [i.get("type") for i in recorder.bodies[-1]["input"]].count(
        "mcp_approval_request"
    ) == 0
    assert any(isinstance(e, TurnFinished) for e in later)


async def test_a_rejected_mcp_approval_ends_the_run_with_its_reason(
    make_conversation, recorder, store, thread_id
):
    chat = await make_conversation("gate")
    (asked,) = [
        e for e in await collect(chat.send("Refund")) if isinstance(e, InterruptAsked)
    ]

    events = await collect(chat.answer(asked.prompt.call_id, "reject"))

    assert recorder.bodies[-1]["input"][0]["approve"] is False
    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.status == "failed"
    assert finished.error == "The client rejected the pending interrupt."
    assert store.load(thread_id).pending is None
