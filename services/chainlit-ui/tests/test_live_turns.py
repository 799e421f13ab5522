"""Running turns and the pages that join them (``live_turns``), with plain
recording pages in place of Chainlit sessions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lgos_chainlit.live_turns import LiveTurns

pytestmark = pytest.mark.anyio


class Page:
    """What a page received, in order (a Chainlit session's ``emit``)."""

    def __init__(self) -> None:
        self.received: list[tuple[str, Any]] = []

    async def emit(self, event: str, data: Any) -> None:
        self.received.append((event, data))


class Shown:
    def __init__(self, *steps: dict[str, Any]) -> None:
        self.steps = list(steps)

    def on_screen(self) -> list[dict[str, Any]]:
        return self.steps


async def test_a_joining_page_gets_the_turn_so_far_then_what_was_held_in_order():
    turns = LiveTurns()
    first, second = Page(), Page()
    answer = {"id": "answer", "output": "So far"}
    history_sent = asyncio.Event()

    with turns.running("chat", object(), first, Shown(answer)) as turn:
        joining = turn.show_to(second.emit)
        await first.emit("stream_token", {"token": " more"})  # the turn goes on
        join = asyncio.create_task(joining.join(after=history_sent.wait()))
        await asyncio.sleep(0)
        assert second.received == []  # held until the page has its history
        history_sent.set()
        await join
        await first.emit("stream_token", {"token": " and the end"})

    assert first.received == [
        ("stream_token", {"token": " more"}),
        ("stream_token", {"token": " and the end"}),
    ]
    assert second.received == [
        ("task_start", {}),
        ("stream_start", answer),
        ("stream_token", {"token": " more"}),
        ("stream_token", {"token": " and the end"}),
    ]
    assert turns.get("chat") is None


async def test_a_page_gone_before_it_joined_holds_nothing_more():
    turns = LiveTurns()
    first, gone = Page(), Page()
    history = asyncio.create_task(asyncio.Event().wait())  # never sent

    with turns.running("chat", object(), first, Shown()) as turn:
        joining = turn.show_to(gone.emit)
        join = asyncio.create_task(joining.join(after=history))
        await asyncio.sleep(0)
        join.cancel()  # its chat ended (the page went away)
        await asyncio.gather(join, return_exceptions=True)
        await first.emit("stream_token", {"token": "late"})
    history.cancel()

    # Nothing is kept for it: events pass on (to a page nobody reads).
    assert gone.received == [("stream_token", {"token": "late"})]


async def test_a_chat_keeps_only_its_latest_turn_and_each_turn_forgets_itself():
    turns = LiveTurns()
    page = Page()

    with turns.running("chat", "first", page, Shown()) as first:
        with turns.running("chat", "second", page, Shown()) as second:
            assert turns.get("chat") is second
        # The newer turn ended; the older one no longer stood for the chat.
        assert turns.get("chat") is None
        turns.forget(first)
    assert turns.get("chat") is None
