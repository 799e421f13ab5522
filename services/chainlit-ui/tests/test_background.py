"""Background runs: queued submit, following the event stream (reattaching
after a drop, picking up after a reload), cancel, failure, and polling."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import httpx
import pytest
from lgos_chainlit.events import (
    AnswerDelta,
    AnswerReplaced,
    BackgroundEnded,
    BackgroundStarted,
    CommentaryDelta,
    CommentaryStarted,
    InterruptAsked,
    Notice,
    TurnFinished,
)
from lgos_chainlit.presentation import ended_line, running_line, status_text
from lgos_chainlit.run_follower import NO_EVENTS_NOTICE
from openai import AsyncOpenAI
from ui_lgos_app import background_answer
from ui_support import RecordingTransport, background_chat, collect, stopped

pytestmark = pytest.mark.anyio


def _answer(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, AnswerDelta))


def _finished(events: list[Any]) -> TurnFinished:
    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    return finished


async def test_the_switch_is_offered_only_to_background_graphs(make_conversation):
    background = await make_conversation("background")
    echo = await make_conversation("echo", background=True)

    assert background.offers_background
    assert not background.in_background
    assert not echo.offers_background
    assert not echo.in_background


async def test_a_background_turn_is_followed_to_completion(
    make_conversation, recorder, store, thread_id
):
    chat = await make_conversation("background", background=True)

    events = await collect(chat.send("Hello"))

    body = recorder.bodies[-1]
    assert body["background"] is True
    assert "stream" not in body
    started = events[0]
    assert isinstance(started, BackgroundStarted)
    assert not started.picked_up
    assert any(isinstance(e, CommentaryStarted) for e in events)
    commentary = "".join(e.text for e in events if isinstance(e, CommentaryDelta))
    assert commentary == "Working in the background"
    assert _answer(events) == background_answer("Hello", 1)
    assert not any(isinstance(e, AnswerReplaced) for e in events)
    ended = next(e for e in events if isinstance(e, BackgroundEnded))
    assert (ended.response_id, ended.status) == (started.response_id, "completed")
    finished = _finished(events)
    assert (finished.response_id, finished.status) == (started.response_id, "completed")

    saved = store.load(thread_id)
    assert saved.running is None
    assert [item["type"] for item in saved.items] == ["message"] * 3
    assert saved.items[-1]["content"][0]["text"] == background_answer("Hello", 1)

    # The next background turn replays the ledger like a foreground one.
    events = await collect(chat.send("Again"))
    assert _answer(events) == background_answer("Again", 4)
    assert len(store.load(thread_id).items) == 6


async def test_the_run_id_is_saved_before_the_first_event(
    make_conversation, store, thread_id
):
    chat = await make_conversation("background", background=True)

    async with aclosing(chat.send("Hello")) as events:
        event = await anext(events)

    assert isinstance(event, BackgroundStarted)
    running = store.load(thread_id).running
    assert running is not None
    assert running.response_id == event.response_id
    assert running.sequence == -1
    assert running.commit_first[0]["content"][0]["text"] == "Hello"


async def test_a_dropped_stream_is_resumed_after_the_last_sequence_number(
    lgos, store, thread_id
):
    transport = RecordingTransport(cut_after=6)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        client = AsyncOpenAI(
            base_url=lgos.base_url, api_key="ui", max_retries=0, http_client=http
        )
        chat = await background_chat(client, store, thread_id)

        events = await collect(chat.send("Drop me"))

    first, second = transport.stream_queries[:2]
    assert first["starting_after"] == "-1"
    assert int(second["starting_after"]) >= 5
    # Nothing lost, nothing twice: the tokens join up across the drop.
    assert _answer(events) == background_answer("Drop me", 1)
    assert _finished(events).status == "completed"
    assert len(store.load(thread_id).items) == 3


async def test_a_reloaded_chat_picks_the_run_up_from_the_saved_sequence(
    make_conversation, store, thread_id
):
    chat = await make_conversation("background", background=True)
    # The page goes away mid-answer.
    shown = await stopped(chat.send("Reload me"), lambda e: isinstance(e, AnswerDelta))
    assert 0 < len(_answer(shown)) < len(background_answer("Reload me", 1))
    saved = store.load(thread_id).running
    assert saved is not None
    assert saved.sequence >= 5

    reloaded = await make_conversation("background")
    events = await collect(reloaded.follow_running())

    assert isinstance(events[0], BackgroundStarted)
    assert events[0].picked_up
    # The answer item started before the saved sequence: its earlier tokens
    # are not on screen, so the whole text replaces what was streamed.
    (replaced,) = [e for e in events if isinstance(e, AnswerReplaced)]
    assert replaced.text == background_answer("Reload me", 1)
    assert _finished(events).status == "completed"
    state = store.load(thread_id)
    assert state.running is None
    assert [item["type"] for item in state.items] == ["message"] * 3
    assert state.items[0]["content"][0]["text"] == "Reload me"


async def test_cancel_stops_the_run_and_leaves_the_ledger_unchanged(
    make_conversation, store, thread_id
):
    chat = await make_conversation("background", background=True)
    await collect(chat.send("First"))
    ledger = store.load(thread_id).items

    events: list[Any] = []
    cancel_events: list[Any] = []
    async for event in chat.send("slow, please"):
        events.append(event)
        if isinstance(event, AnswerDelta) and not cancel_events:
            # The cancel button, while the follower waits for the next event.
            cancel_events = await collect(chat.cancel())

    assert cancel_events == []  # the follower reports it
    finished = _finished(events)
    assert finished.status == "cancelled"
    assert status_text(finished).startswith("The background run was cancelled")
    assert next(e for e in events if isinstance(e, BackgroundEnded)).status == (
        "cancelled"
    )
    state = store.load(thread_id)
    assert state.running is None
    assert state.items == ledger

    # Cancelling again: nothing is running.
    (notice,) = await collect(chat.cancel())
    assert notice == Notice("info", "No background run is in progress.")


async def test_cancel_after_a_reload_settles_the_run_itself(
    make_conversation, store, thread_id
):
    chat = await make_conversation("background", background=True)
    await stopped(chat.send("slow, please"), lambda e: isinstance(e, BackgroundStarted))

    reloaded = await make_conversation("background")
    events = await collect(reloaded.cancel())

    assert _finished(events).status == "cancelled"
    state = store.load(thread_id)
    assert state.running is None
    assert state.items == []


async def test_a_failed_run_is_shown_and_leaves_the_ledger_unchanged(
    make_conversation, store, thread_id
):
    chat = await make_conversation("background", background=True)

    events = await collect(chat.send("please fail"))

    finished = _finished(events)
    assert finished.status == "failed"
    assert finished.error
    assert status_text(finished) == f"The graph failed: {finished.error}."
    state = store.load(thread_id)
    assert state.running is None
    assert state.items == []


async def test_a_message_while_a_run_is_going_follows_it(
    make_conversation, store, thread_id
):
    chat = await make_conversation("background", background=True)
    # The user pressed stop; the run goes on.
    await stopped(chat.send("Hello"), lambda e: isinstance(e, BackgroundStarted))

    events = await collect(chat.send("Another question"))

    assert isinstance(events[0], Notice)
    assert "still going" in events[0].text
    assert _finished(events).status == "completed"
    state = store.load(thread_id)
    assert state.items[0]["content"][0]["text"] == "Hello"
    assert len(state.items) == 3


async def test_without_a_retrievable_stream_the_run_is_polled(lgos, store, thread_id):
    transport = RecordingTransport(refuse=True)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        client = AsyncOpenAI(
            base_url=lgos.base_url, api_key="ui", max_retries=0, http_client=http
        )
        chat = await background_chat(client, store, thread_id)
        chat.runs.poll_interval = 0.05

        events = await collect(chat.send("Poll me"))

    notice = next(e for e in events if isinstance(e, Notice))
    assert "polling" in notice.text
    assert "HTTP 400" in notice.text
    (replaced,) = [e for e in events if isinstance(e, AnswerReplaced)]
    assert replaced.text == background_answer("Poll me", 1)
    assert transport.polls >= 1
    assert _finished(events).status == "completed"
    assert len(store.load(thread_id).items) == 3


async def test_an_interrupt_pauses_and_resumes_in_the_background(
    make_conversation, recorder, store, thread_id
):
    chat = await make_conversation("refund_later", background=True)

    events = await collect(chat.send("Refund order 9"))
    (asked,) = [e for e in events if isinstance(e, InterruptAsked)]
    pending = store.load(thread_id).pending
    assert pending is not None
    assert store.load(thread_id).running is None

    reloaded = await make_conversation("refund_later")
    events = await collect(reloaded.answer(asked.prompt.call_id, "approve"))

    resume = recorder.bodies[-1]
    assert resume["background"] is True
    assert resume["previous_response_id"] == pending.response_id
    assert _answer(events) == "Refund approve."
    state = store.load(thread_id)
    assert state.pending is None
    assert state.running is None
    assert state.items[-1]["content"][0]["text"] == "Refund approve."


async def test_a_background_resume_is_picked_up_after_a_reload(
    make_conversation, store, thread_id
):
    chat = await make_conversation("refund_later", background=True)
    events = await collect(chat.send("Refund order 10"))
    (asked,) = [e for e in events if isinstance(e, InterruptAsked)]
    await stopped(
        chat.answer(asked.prompt.call_id, "reject"),
        lambda e: isinstance(e, BackgroundStarted),
    )
    saved = store.load(thread_id)
    assert saved.running is not None
    assert saved.running.resuming
    assert saved.pending is not None

    reloaded = await make_conversation("refund_later")
    events = await collect(reloaded.follow_running())

    assert _finished(events).status == "completed"
    state = store.load(thread_id)
    assert state.pending is None
    assert state.running is None
    assert state.items[-1]["content"][0]["text"] == "Refund reject."
    calls = [item for item in state.items if item["type"] == "function_call"]
    assert [call["call_id"] for call in calls] == [asked.prompt.call_id]


async def test_a_snapshot_instead_of_a_stream_is_polled_to_the_answer(
    lgos, store, thread_id
):
    transport = RecordingTransport(snapshot=True)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        client = AsyncOpenAI(
            base_url=lgos.base_url, api_key="ui", max_retries=0, http_client=http
        )
        chat = await background_chat(client, store, thread_id)
        chat.runs.poll_interval = 0.05

        events = await collect(chat.send("slow, snapshot me"))

    assert len(transport.stream_queries) == 1  # then it polls
    assert Notice("info", NO_EVENTS_NOTICE) in events
    assert transport.polls >= 2
    (replaced,) = [e for e in events if isinstance(e, AnswerReplaced)]
    assert replaced.text == background_answer("slow, snapshot me", 1)
    assert _finished(events).status == "completed"
    assert len(store.load(thread_id).items) == 3


async def test_polling_gives_up_with_a_message_after_its_limit(lgos, store, thread_id):
    transport = RecordingTransport(snapshot=True)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        client = AsyncOpenAI(
            base_url=lgos.base_url, api_key="ui", max_retries=0, http_client=http
        )
        chat = await background_chat(client, store, thread_id)
        chat.runs.poll_interval = 0.05
        chat.runs.poll_limit = 0.5

        events = await collect(chat.send("slow, wait for me"))
        await collect(chat.cancel())  # the test's run stops here

    notice = events[-1]
    assert isinstance(notice, Notice)
    assert notice.level == "error"
    assert "still going after 0.5 s of waiting" in notice.text
    assert "send a message to follow it again" in notice.text
    assert not any(isinstance(e, TurnFinished) for e in events)
    assert store.load(thread_id).running is None


@pytest.mark.parametrize("status", ["completed", "incomplete", "failed", "cancelled"])
def test_the_running_line_names_no_id_and_says_how_the_run_ended(status):
    lines = [running_line(picked_up=False), running_line(picked_up=True)]
    ended = ended_line(status)

    assert all("resp_" not in line and "background" in line for line in lines)
    assert "resp_" not in ended
    assert ended != ended_line("completed") or status == "completed"
    assert (
        status.replace("completed", "finished").replace("incomplete", "ended early")
        in ended
    )
