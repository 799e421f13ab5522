"""A browser tab on the running Chainlit app, below the browser.

``Tab`` speaks Chainlit's socket.io protocol as its page does (connect with
a session id, a chat profile or the thread to resume; ``client_message``;
``stop``) over the real websocket, and keeps what the page would show: the
messages and steps, folded from the events the server emits by the rules of
Chainlit 2.12's page (``resume_thread`` replaces the list; a message whose
parent is not on the page is not shown; a token goes to the message it names,
if the page has it). Closing a tab and opening another on the same thread is
a reload. Waits are on the events the tab receives, bounded.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import socketio

Step = dict[str, Any]
WAIT_SECONDS = 30.0
"""How long a tab waits for what it expects (a busy machine included)."""


def _walk(steps: list[Step]) -> Iterator[Step]:
    for step in steps:
        yield step
        yield from _walk(step.get("steps") or [])


def _find(steps: list[Step], step_id: str) -> Step | None:
    return next((step for step in _walk(steps) if step["id"] == step_id), None)


class Page:
    """The messages a Chainlit page shows, as its own reducer keeps them."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def add(self, step: Step) -> None:
        known = _find(self.steps, step["id"])
        if known is not None:
            known.update(step)
            return
        parent_id = step.get("parentId")
        if parent_id:
            parent = _find(self.steps, parent_id)
            if parent is not None:  # an orphan is not shown
                parent.setdefault("steps", []).append(dict(step))
            return
        self.steps.append(dict(step))

    def update(self, step: Step) -> None:
        known = _find(self.steps, step["id"])
        if known is not None:
            known.update(step)

    def delete(self, step: Step) -> None:
        def without(steps: list[Step]) -> list[Step]:
            kept = [s for s in steps if s["id"] != step["id"]]
            for s in kept:
                if s.get("steps"):
                    s["steps"] = without(s["steps"])
            return kept

        self.steps = without(self.steps)

    def token(self, data: dict[str, Any]) -> None:
        known = _find(self.steps, data["id"])
        if known is None:
            return
        field = "input" if data.get("isInput") else "output"
        if data.get("isSequence"):
            known[field] = data["token"]
        else:
            known[field] = (known.get(field) or "") + data["token"]

    def resume(self, thread: dict[str, Any]) -> None:
        self.steps = []
        for step in thread.get("steps") or []:
            self.add(step)

    def of_type(self, kind: str) -> list[Step]:
        return [step for step in _walk(self.steps) if step.get("type") == kind]

    def named(self, name: str) -> list[Step]:
        return [step for step in _walk(self.steps) if step.get("name") == name]


class Tab:
    """One tab of one browser (its cookies) on the Chainlit app."""

    def __init__(self, url: str, cookies: str) -> None:
        self.url = url
        self.cookies = cookies
        self.session_id = str(uuid.uuid4())
        self.page = Page()
        self.events: list[tuple[str, Any]] = []
        self.thread_id: str | None = None
        self.running = False
        """Between Chainlit's ``task_start`` and ``task_end``: the page shows
        its stop button."""
        self._changed = asyncio.Condition()
        self._client = socketio.AsyncClient(reconnection=False)
        self._client.on("*", self._received)

    async def open(self, *, profile: str | None = None, thread_id: str | None = None):
        """Load the page: a new chat on ``profile``, or the chat ``thread_id``
        (a reload, or a chat picked in the sidebar)."""
        self.thread_id = thread_id
        auth = {
            "sessionId": self.session_id,
            "clientType": "webapp",
            "userEnv": "{}",
            "chatProfile": profile,
            "threadId": thread_id,
        }
        await self._client.connect(
            self.url,
            headers={"Cookie": self.cookies},
            auth=auth,
            transports=["websocket"],
            socketio_path="/ws/socket.io",
        )
        await self._client.emit("connection_successful")
        if thread_id is None:
            # Chainlit runs ``on_chat_start`` as a step of its own.
            await self.until(self._chat_started, "the new chat started")
        else:
            await self.until(self._resumed, "the chat's history")
        return self

    def _chat_started(self) -> bool:
        return any(
            event == "update_message" and data.get("name") == "on_chat_start"
            for event, data in self.events
        )

    def _resumed(self) -> bool:
        return any(event == "resume_thread" for event, _ in self.events)

    async def close(self) -> None:
        """The tab goes away (closed, or reloaded)."""
        await self._client.disconnect()

    async def send(self, text: str) -> None:
        message = {
            "id": str(uuid.uuid4()),
            "threadId": self.thread_id or "",
            "name": "Guest",
            "type": "user_message",
            "output": text,
            "createdAt": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        self.page.add(message)
        await self._client.emit(
            "client_message", {"message": message, "fileReferences": []}
        )

    async def stop(self) -> None:
        """The stop button."""
        await self._client.emit("stop")

    async def _received(self, event: str, data: Any = None) -> None:
        self.events.append((event, data))
        if event in ("new_message", "stream_start"):
            self.page.add(data)
        elif event == "update_message":
            self.page.update(data)
        elif event == "delete_message":
            self.page.delete(data)
        elif event == "stream_token":
            self.page.token(data)
        elif event == "resume_thread":
            self.page.resume(data)
        elif event == "first_interaction":
            self.thread_id = data["thread_id"]
        elif event == "task_start":
            self.running = True
        elif event == "task_end":
            self.running = False
        async with self._changed:
            self._changed.notify_all()

    async def until(
        self, check: Callable[[], bool], what: str, within: float = WAIT_SECONDS
    ) -> None:
        """Wait (at most ``within`` seconds) until the page shows ``check``."""

        async def shown() -> None:
            async with self._changed:
                await self._changed.wait_for(check)

        try:
            await asyncio.wait_for(shown(), within)
        except TimeoutError:
            raise AssertionError(
                f"the tab never showed {what} in {within:g} s; it shows "
                f"{self.texts()} (running: {self.running})"
            ) from None

    # -- what the page shows ------------------------------------------------

    def answers(self) -> list[str]:
        """The answers' texts, oldest first."""
        return [
            str(s.get("output") or "") for s in self.page.of_type("assistant_message")
        ]

    def answer(self) -> str:
        answers = self.answers()
        return answers[-1] if answers else ""

    def progress(self) -> str:
        return "\n".join(
            str(s.get("output") or "") for s in self.page.named("Progress")
        )

    def texts(self) -> list[str]:
        return [
            str(s.get("output") or "")
            for s in _walk(self.page.steps)
            if s.get("type") != "run" or s.get("name") == "Progress"
        ]


async def guest_cookies(url: str) -> str:
    """A new browser: signed in as a guest, its session cookie as a header."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as browser:
        (await browser.post("/auth/header")).raise_for_status()
        return "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
