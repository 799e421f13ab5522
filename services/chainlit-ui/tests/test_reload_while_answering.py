"""A chat reloaded (or closed and reopened) while its answer still comes.

The real app (``lgos-chainlit``) against the LGOS test server; each tab is a
socket.io client that does what the page does (``ui_tab``). The ``held``
graph shows its progress and the first words of its answer, then waits until
the test releases it, so the page can be replaced at a known point of a
running turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from conftest import LgosServer
from lgos_chainlit.presentation import STILL_ANSWERING
from lgos_testkit import FilesApi, async_wait_until
from ui_lgos_app import HELD_END, HELD_PROGRESS, HELD_START, Hold
from ui_support import start_ui
from ui_tab import WAIT_SECONDS, Tab, guest_cookies

pytestmark = pytest.mark.anyio

WHOLE = HELD_START + HELD_END
STOPPED = "Task manually stopped."
"""What Chainlit writes into the chat when its stop button is pressed."""


@pytest.fixture(scope="module")
def app(
    lgos: LgosServer, files_server: FilesApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """One app for the module (each test is a new browser, so a new guest):
    (base URL, home)."""
    directory = tmp_path_factory.mktemp("reload-ui")
    with start_ui(lgos.base_url, files_server.openai_url, directory) as started:
        url, home, _ = started
        yield url, home


@pytest.fixture
async def guest(app: tuple[str, Path]) -> AsyncIterator[Browser]:
    opened = Browser(app[0], await guest_cookies(app[0]))
    yield opened
    await opened.close()


class Browser:
    """One browser (one guest): its tabs share its cookies."""

    def __init__(self, url: str, cookies: str) -> None:
        self.url, self.cookies = url, cookies
        self.tabs: list[Tab] = []

    async def open(self, **where: str) -> Tab:
        tab = Tab(self.url, self.cookies)
        self.tabs.append(tab)
        return await tab.open(**where)

    async def reload(self, tab: Tab) -> Tab:
        """The same chat in a new page (a new Chainlit session)."""
        assert tab.thread_id is not None
        await tab.close()
        return await self.open(thread_id=tab.thread_id)

    async def close(self) -> None:
        for tab in self.tabs:
            await tab.close()


async def _held_answer_shown(guest: Browser) -> Tab:
    """A new chat on ``held`` whose answer began and is held."""
    tab = await guest.open(profile="held")
    await tab.send("Hold it")
    await tab.until(lambda: HELD_START in tab.answer(), "the first words")
    await tab.until(lambda: tab.thread_id is not None, "the chat's thread")
    return tab


def _ledger(home: Path, thread_id: str) -> list[dict[str, object]]:
    """The chat's committed items (none before its first commit)."""
    saved = home / "chats" / f"{thread_id}.json"
    return list(json.loads(saved.read_text())["items"]) if saved.exists() else []


def _answered(home: Path, thread_id: str) -> bool:
    """The whole answer is the chat's last committed item."""
    items = _ledger(home, thread_id)
    return bool(items) and items[-1]["content"][0]["text"] == WHOLE  # type: ignore[index]


def _whole_answers(tab: Tab) -> int:
    return sum(answer.startswith(WHOLE) for answer in tab.answers())


async def test_a_reloaded_chat_shows_the_running_answer_live_to_its_end(
    guest: Browser, hold: Hold, app: tuple[str, Path]
):
    tab = await _held_answer_shown(guest)

    reloaded = await guest.reload(tab)

    # What had come before the reload, and the answer still coming.
    await reloaded.until(lambda: HELD_START in reloaded.answer(), "the answer so far")
    assert HELD_PROGRESS in reloaded.progress()
    assert reloaded.running
    hold.release()
    await reloaded.until(lambda: HELD_END in reloaded.answer(), "the answer's end")
    await reloaded.until(lambda: not reloaded.running, "the turn's end")
    assert reloaded.answers() == [_with_usage(reloaded.answer())]
    assert reloaded.answer().startswith(WHOLE)
    # Kept: another reload shows it from the history, once.
    again = await guest.reload(reloaded)
    await again.until(lambda: bool(again.answers()), "the kept answer")
    assert again.answers() == reloaded.answers()
    assert not again.running
    assert _answered(app[1], str(tab.thread_id))


def _with_usage(answer: str) -> str:
    assert "tokens" in answer.rsplit("\n", 1)[-1], answer
    return answer


async def _stopped_at_the_gate(hold: Hold) -> None:
    """The server cancelled the held run (its stream was closed)."""
    assert await asyncio.to_thread(hold.cancelled.wait, WAIT_SECONDS)


async def test_a_chat_reopened_after_its_answer_ended_shows_it_ended(
    guest: Browser, hold: Hold, app: tuple[str, Path]
):
    tab = await _held_answer_shown(guest)
    await tab.close()  # no page while the rest comes
    hold.release()

    async def committed() -> bool:
        return _answered(app[1], str(tab.thread_id))

    await async_wait_until(committed, WAIT_SECONDS, "the turn's end")
    reopened = await guest.open(thread_id=str(tab.thread_id))

    assert [answer.split("\n")[0] for answer in reopened.answers()] == [WHOLE]
    assert not reopened.running


async def test_an_answer_stopped_before_the_reload_stays_stopped(
    guest: Browser, hold: Hold, app: tuple[str, Path]
):
    tab = await _held_answer_shown(guest)

    await tab.stop()
    await tab.until(lambda: not tab.running, "the stopped turn")
    await _stopped_at_the_gate(hold)
    reloaded = await guest.reload(tab)
    hold.release()

    # As far as it came, and no further: nothing is running to join.
    assert reloaded.answers() == [HELD_START, STOPPED]
    assert not reloaded.running
    assert len(_ledger(app[1], str(tab.thread_id))) == 0  # not committed


async def test_stop_on_the_reloaded_page_stops_the_answer(
    guest: Browser, hold: Hold, app: tuple[str, Path]
):
    tab = await _held_answer_shown(guest)
    reloaded = await guest.reload(tab)
    await reloaded.until(lambda: reloaded.running, "the joined turn")

    await reloaded.stop()

    await _stopped_at_the_gate(hold)
    await reloaded.until(lambda: not reloaded.running, "the stopped turn")
    assert reloaded.answers() == [HELD_START, STOPPED]
    again = await guest.reload(reloaded)
    assert again.answers() == [HELD_START, STOPPED]
    assert not again.running
    assert len(_ledger(app[1], str(tab.thread_id))) == 0


async def test_the_chat_goes_on_from_the_reloaded_page_with_the_whole_conversation(
    guest: Browser, hold: Hold, lgos: LgosServer
):
    tab = await _held_answer_shown(guest)
    reloaded = await guest.reload(tab)
    await reloaded.until(lambda: reloaded.running, "the joined turn")

    # A message while the answer still comes is not sent.
    sent = len(lgos.recorder.bodies)
    await reloaded.send("And another thing")
    await reloaded.until(
        lambda: STILL_ANSWERING in reloaded.texts(), "that the answer still comes"
    )
    hold.release()
    await reloaded.until(lambda: not reloaded.running, "the turn's end")
    assert len(lgos.recorder.bodies) == sent
    await reloaded.send("Next question")
    await reloaded.until(lambda: _whole_answers(reloaded) == 2, "the next answer")

    # The next request carries the turn answered while the page reloaded.
    request = lgos.recorder.bodies[-1]["input"]
    texts = [part["text"] for item in request for part in item["content"]]
    assert texts == ["Hold it", HELD_PROGRESS, WHOLE, "Next question"]
