"""Turns still being answered, so a reloaded page can show them to the end.

A foreground turn is one streamed request read by the Chainlit handler that
sent it. Chainlit does not stop that handler when its page goes away (a
reload, a closed tab): the answer keeps coming and is saved to the chat's
history when it ends, but the reloaded page is a new Chainlit session that
hears nothing of it. ``LiveTurns`` keeps each running turn by its chat
(thread id) for as long as its handler shows it, with the chat's
``Conversation`` (one object per chat while a turn runs, so the turn's commit
is not overwritten by a second copy of the ledger) and what it shows.

``Pages`` sends a turn's output to every page that opened its chat since it
began: it takes the place of the ``emit`` of the handler's Chainlit session
(the attribute Chainlit itself replaces to move a session to a new socket)
and passes each event on to the session's own page and to each page that
joined. A joining
page first gets what the turn had shown when it joined (taken at the same
moment as the history Chainlit sends it); the turn's events from that moment
are held for it until Chainlit has sent that history (which replaces
whatever the page showed before), then passed on in order.

This module does not import Chainlit: a session is anything with an ``emit``
attribute (``emit(event, data)``, awaited when it returns an awaitable).
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

Emit = Callable[[str, Any], Any]
"""Sends an event to a page (Chainlit's returns an awaitable)."""
Event = tuple[str, Any]


async def _send(emit: Emit, event: str, data: Any) -> None:
    sent = emit(event, data)
    if inspect.isawaitable(sent):
        await sent


class Session(Protocol):
    """The part of a Chainlit websocket session that sends to its page."""

    emit: Emit


class JoiningPage:
    """A page that joined a running turn: the events for it are held until
    ``join`` (after its history was sent), then passed on as they come."""

    def __init__(self, emit: Emit, first: list[Event]) -> None:
        self._emit = emit
        self._held: deque[Event] = deque(first)
        self._joined = False

    async def __call__(self, event: str, data: Any) -> None:
        if self._joined:
            await _send(self._emit, event, data)
        else:
            self._held.append((event, data))

    async def join(self, after: Awaitable[Any]) -> None:
        """Once ``after`` is done (the page has its history), send what was
        held, in order, then each event as it comes."""
        try:
            await asyncio.wait([asyncio.ensure_future(after)])
            while self._held:
                event, data = self._held.popleft()
                await _send(self._emit, event, data)
        finally:
            # Nothing is held once joined (or given up: its page went away).
            self._held.clear()
            self._joined = True


class Pages:
    """Where a session's output goes: its own page and every page that
    joined one of its turns (pages of the same chat: a Chainlit session
    belongs to one chat). It stays in place after the turn: Chainlit sends
    the turn's last events (its ``task_end``) after the handler returned."""

    def __init__(self, session: Session) -> None:
        self.first = session.emit
        self.joined: list[JoiningPage] = []
        session.emit = self.emit

    @classmethod
    def of(cls, session: Session) -> Pages:
        installed = getattr(session.emit, "__self__", None)
        return installed if isinstance(installed, Pages) else cls(session)

    async def emit(self, event: str, data: Any) -> None:
        await _send(self.first, event, data)
        for page in list(self.joined):
            await page(event, data)

    def add(self, emit: Emit, first: list[Event]) -> JoiningPage:
        page = JoiningPage(emit, first)
        self.joined.append(page)
        return page


class ShownTurn(Protocol):
    def on_screen(self) -> list[dict[str, Any]]:
        """What the turn shows now and a history may lack (Chainlit step
        dicts: a streamed answer is saved only when it ends)."""
        ...


@dataclass
class LiveTurn:
    """A turn being answered for ``thread_id`` by the handler ``task``."""

    thread_id: str
    conversation: Any
    """The chat's ``Conversation`` (shared by every page of the chat)."""
    task: asyncio.Task[Any]
    session: Session
    view: ShownTurn

    def show_to(self, emit: Emit) -> JoiningPage:
        """Show this turn on another page: what it shows now, then what it
        shows next, once the page's ``join`` runs. Call it at the moment the
        page's history was read (no await between)."""
        first: list[Event] = [("task_start", {})]
        first += [("stream_start", step) for step in self.view.on_screen()]
        return Pages.of(self.session).add(emit, first)

    def stop(self) -> None:
        self.task.cancel()

    async def ended(self) -> None:
        """Wait for the turn's handler to end (however it ends)."""
        await asyncio.wait([self.task])


class LiveTurns:
    """The running turns of this process, by chat."""

    def __init__(self) -> None:
        self._turns: dict[str, LiveTurn] = {}

    def get(self, thread_id: str) -> LiveTurn | None:
        return self._turns.get(thread_id)

    @contextmanager
    def running(
        self, thread_id: str, conversation: Any, session: Session, view: ShownTurn
    ) -> Iterator[LiveTurn]:
        """Keep the turn the current task answers while the block runs."""
        turn = LiveTurn(
            thread_id, conversation, asyncio.current_task() or _no_task(), session, view
        )
        self._turns[thread_id] = turn
        try:
            yield turn
        finally:
            self.forget(turn)

    def forget(self, turn: LiveTurn) -> None:
        """No page joins ``turn`` from now on (it ends, or is being stopped)."""
        if self._turns.get(turn.thread_id) is turn:
            del self._turns[turn.thread_id]


def _no_task() -> asyncio.Task[Any]:
    raise RuntimeError("a live turn is answered by a task")
