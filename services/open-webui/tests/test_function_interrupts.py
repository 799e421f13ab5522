"""Interrupts through the Function: ``lgos_interrupt`` calls (and
``mcp_approval_request`` items) become Open WebUI's question dialog, answers
resume the paused run with ``previous_response_id``; an unanswered question
waits in the message."""

from __future__ import annotations

import pytest
from conftest import APPROVAL
from owui_support import chat, user

pytestmark = pytest.mark.anyio

REQUEST = "Refund order 42, it arrived broken"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def choose(label):
    """The reply Open WebUI's question form sends when ``label`` is picked."""

    def reply(event):
        (question,) = event["data"]["questions"]
        labels = [option["label"] for option in question["options"]]
        return {
            "status": "answered",
            "answers": {
                question["id"]: {
                    "type": "option",
                    "option_index": labels.index(label),
                    "label": label,
                    "description": label,
                }
            },
        }

    return reply


def typed(text):
    def reply(event):
        (question,) = event["data"]["questions"]
        return {
            "status": "answered",
            "answers": {question["id"]: {"type": "other", "text": text}},
        }

    return reply


def visible(text):
    """The message as Open WebUI renders it: reference definitions hidden."""
    return "\n".join(
        line for line in text.splitlines() if not line.startswith("[lgos-")
    ).strip()


async def test_the_question_dialog_offers_the_choices_and_approve_resumes(
    pipe, recorder
):
    recorder.replies.append(choose("approve"))

    text = await chat(pipe, recorder, "lgos/interrupts", [user(REQUEST)])

    (call,) = recorder.calls
    assert call["type"] == "request:user_input"
    (question,) = call["data"]["questions"]
    assert REQUEST in question["question"]
    assert [o["label"] for o in question["options"]] == ["approve", "reject"]
    assert question["allow_other"] is True
    assert "Reviewer decision: approve. The refund was approved" in visible(text)
    assert "Waiting for your answer" in recorder.statuses()
    assert recorder.of_type("status")[-1]["done"] is True


async def test_reject_resumes_with_a_rejection(pipe, recorder):
    recorder.replies.append(choose("reject"))

    text = await chat(pipe, recorder, "lgos/interrupts", [user(REQUEST)])

    assert "The refund was rejected" in visible(text)


async def test_a_free_answer_in_the_dialog_is_passed_on(pipe, recorder):
    recorder.replies.append(typed("refund half of it"))

    text = await chat(pipe, recorder, "lgos/interrupts", [user(REQUEST)])

    assert "The reviewer answered “refund half of it”" in visible(text)


async def test_an_unanswered_question_waits_and_a_reply_message_answers_it(
    pipe, recorder
):
    recorder.replies.append({"status": "cancelled", "answers": {}})
    first = await chat(pipe, recorder, "lgos/interrupts", [user(REQUEST)])

    assert visible(first).endswith(
        "Waiting for your answer: reply to this message to continue.*"
    )
    assert "Reviewer decision" not in first
    # Later (even after a restart: the pause is in the message) the user
    # replies with a message instead of the dialog.
    history = [user(REQUEST), {"role": "assistant", "content": first}, user("reject")]
    second = await chat(pipe, recorder, "lgos/interrupts", history)

    assert "The refund was rejected" in visible(second)
    assert len(recorder.calls) == 1  # no second dialog


async def test_answering_a_finished_pause_again_is_explained(pipe, recorder):
    recorder.replies.append(None)  # the dialog timed out
    first = await chat(pipe, recorder, "lgos/interrupts", [user(REQUEST)])
    history = [user(REQUEST), {"role": "assistant", "content": first}, user("approve")]
    await chat(pipe, recorder, "lgos/interrupts", history)

    again = await chat(pipe, recorder, "lgos/interrupts", history)

    assert "no longer has this question pending" in again


async def test_a_later_turn_after_an_answered_pause_starts_a_new_run(pipe, recorder):
    recorder.replies.append(choose("approve"))
    first = await chat(pipe, recorder, "lgos/interrupts", [user(REQUEST)])
    recorder.replies.append(choose("reject"))
    history = [
        user(REQUEST),
        {"role": "assistant", "content": first},
        user("Refund order 43 too"),
    ]

    second = await chat(pipe, recorder, "lgos/interrupts", history)

    assert len(recorder.calls) == 2
    assert "order 43" in recorder.calls[1]["data"]["questions"][0]["question"]
    assert "The refund was rejected" in visible(second)


async def test_an_mcp_approval_request_is_asked_and_approved(pipe, recorder):
    recorder.replies.append(choose("approve"))

    text = await chat(pipe, recorder, "lgos/approvals", [user("Refund order 42")])

    (call,) = recorder.calls
    (question,) = call["data"]["questions"]
    assert question["question"] == APPROVAL["question"]
    assert [o["label"] for o in question["options"]] == ["approve", "reject"]
    assert question["allow_other"] is False
    assert visible(text) == "Refunded 19.90 EUR."


async def test_a_rejected_mcp_approval_ends_the_run(pipe, recorder):
    recorder.replies.append(choose("reject"))

    text = await chat(pipe, recorder, "lgos/approvals", [user("Refund order 42")])

    assert "Not approved, the run ended" in visible(text)
    assert "Refunded" not in text


async def test_a_typed_reply_answers_a_waiting_approval(pipe, recorder):
    recorder.replies.append(None)  # the dialog timed out
    first = await chat(pipe, recorder, "lgos/approvals", [user("Refund order 42")])
    history = [
        user("Refund order 42"),
        {"role": "assistant", "content": first},
        user("approve"),
    ]

    second = await chat(pipe, recorder, "lgos/approvals", history)

    assert visible(second) == "Refunded 19.90 EUR."
