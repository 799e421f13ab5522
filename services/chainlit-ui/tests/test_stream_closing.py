"""Every stream the UI reads is ended by the task that reads it.

A turn reads SDK streams through a chain of async generators (the turn, the
request, the event reader, the SDK's events, its SSE decoder, httpx's body).
Whatever way a turn ends (its last event, a dropped connection, the reader
cancelled, the reader stopping and closing the turn), none of those
generators may be left suspended: left over, they are finalized later by the
garbage collector, in another task or after the event loop closed, which
fails with "async generator already executing" and keeps connections open
meanwhile.

Each test runs its turn inside ``no_async_generator_left``, which lists the
async generators of the client's code (``lgos_chainlit``, ``openai``,
``httpx``) that the turn created and did not finish.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import httpx
import pytest
from lgos_chainlit.events import AnswerDelta, BackgroundStarted, Notice
from lgos_testkit import no_async_generator_left
from openai import AsyncOpenAI
from ui_support import RecordingTransport, background_chat, collect, stopped

pytestmark = pytest.mark.anyio


async def _closed_after_first_answer_token(events: AsyncGenerator[Any, None]) -> None:
    """What the UI does when it stops showing a turn: close it."""
    async with aclosing(events) as turn:
        async for event in turn:
            if isinstance(event, AnswerDelta):
                return


def _first_answer_token(event: object) -> bool:
    return isinstance(event, AnswerDelta)


async def test_a_turn_that_ends_normally_leaves_no_stream_open(make_conversation):
    chat = await make_conversation("echo")

    with no_async_generator_left({"lgos_chainlit"}):
        events = await collect(chat.send("hello"))

    assert any(isinstance(e, AnswerDelta) for e in events)


async def test_a_followed_background_turn_leaves_no_stream_open(make_conversation):
    chat = await make_conversation("background", background=True)

    with no_async_generator_left({"lgos_chainlit"}):
        events = await collect(chat.send("Hello"))

    assert isinstance(events[0], BackgroundStarted)


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
async def test_a_reader_cancelled_mid_answer_leaves_no_stream_open(
    make_conversation, background
):
    chat = await make_conversation("background", background=background)

    with no_async_generator_left({"lgos_chainlit"}):
        shown = await stopped(chat.send("slow, please"), _first_answer_token)

    assert isinstance(shown[-1], AnswerDelta)


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
async def test_a_turn_closed_by_its_reader_leaves_no_stream_open(
    make_conversation, background
):
    chat = await make_conversation("background", background=background)

    with no_async_generator_left({"lgos_chainlit"}):
        await _closed_after_first_answer_token(chat.send("slow, please"))


async def test_a_dropped_connection_leaves_no_stream_open(lgos, store, thread_id):
    transport = RecordingTransport(cut_after=6)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        client = AsyncOpenAI(
            base_url=lgos.base_url, api_key="ui", max_retries=0, http_client=http
        )
        chat = await background_chat(client, store, thread_id)

        with no_async_generator_left({"lgos_chainlit"}):
            events = await collect(chat.send("Drop me"))

    assert len(transport.stream_queries) >= 2
    assert not [e for e in events if isinstance(e, Notice) and e.level == "error"]
