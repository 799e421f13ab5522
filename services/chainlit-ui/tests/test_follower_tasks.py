"""Follower tasks: they outlive the handler that started them, report their
errors in the chat, and stop when the chat ends."""

from __future__ import annotations

import asyncio

import pytest
from lgos_chainlit.follower_tasks import Followers

pytestmark = pytest.mark.anyio


async def test_a_follower_keeps_running_after_the_handler_returned():
    reported: list[Exception] = []
    release = asyncio.Event()
    finished: list[str] = []

    async def report(exc: Exception) -> None:
        reported.append(exc)

    async def follow() -> None:
        await release.wait()
        finished.append("answer shown")

    followers = Followers(report)

    async def handler() -> None:
        followers.start(follow())  # and returns at once

    await handler()
    assert len(followers.tasks) == 1
    release.set()
    await asyncio.gather(*followers.tasks)

    assert finished == ["answer shown"]
    assert reported == []
    assert not followers.tasks  # a finished follower is let go


async def test_a_failing_follower_reports_its_error():
    reported: list[Exception] = []

    async def report(exc: Exception) -> None:
        reported.append(exc)

    async def follow() -> None:
        raise RuntimeError("the socket went away")

    followers = Followers(report)
    await followers.start(follow())

    assert [str(exc) for exc in reported] == ["the socket went away"]


async def test_the_chat_ending_cancels_its_followers():
    cleaned_up = asyncio.Event()

    async def report(exc: Exception) -> None:
        raise AssertionError(f"not an error: {exc}")

    async def follow() -> None:
        try:
            await asyncio.Event().wait()  # a run that never ends
        finally:
            cleaned_up.set()

    followers = Followers(report)
    task = followers.start(follow())
    await asyncio.sleep(0)  # the follower is waiting

    await followers.close()

    assert task.cancelled()
    assert cleaned_up.is_set()
    assert not followers.tasks
