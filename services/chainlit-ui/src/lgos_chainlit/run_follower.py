"""Following a background run: its event stream, reattached after drops.

``RunFollower.follow`` reads ``GET /responses/{id}?stream=true&starting_after=N``
after the run's last sequence number, moving that number along (and saving it
at most once per ``SAVE_INTERVAL``) so a dropped stream or a reloaded chat
picks up where it left off. When the server refuses to stream a retrieved
Response, or answers the stream request with no events at all (LiteLLM 1.108.7
returns the JSON snapshot for ``?stream=true`` on its own ``/v1`` routes; the
stack's gateway follows through its pass-through route instead), it polls the
snapshot instead
until the run ends, for at most ``poll_limit`` seconds. A stream that ends
without a terminal event (a cancelled run has none) is settled by the run's
snapshot.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Sequence,
)
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import httpx
from openai import APIConnectionError, APIStatusError, AsyncOpenAI, OpenAIError

from lgos_chainlit.chats import BackgroundRun
from lgos_chainlit.closing import owned
from lgos_chainlit.events import Notice, StreamFinished, UIEvent
from lgos_chainlit.stream import StreamError, StreamState, read_stream

TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})
SAVE_INTERVAL = 1.0
NO_EVENTS_NOTICE = (
    "The gateway sends no live events for this background run; the answer "
    "appears when the run ends."
)


@dataclass(frozen=True)
class RunLost:
    """The server does not know the run (404)."""


@dataclass(frozen=True)
class RouteMissing:
    """The follow address does not exist (a gateway without the follow route
    answers 404 without an OpenAI error): nothing was read from it."""


def route_missing(exc: APIStatusError) -> bool:
    """A 404 from the gateway itself (its framework's ``{"detail": ...}``),
    not LGOS's 404 for an unknown run (an OpenAI error envelope)."""
    body = exc.body
    return (
        exc.status_code == 404
        and isinstance(body, dict)
        and "detail" in body
        and "message" not in body
    )


@dataclass(frozen=True)
class RunEnded:
    """The run's terminal Response; ``replace_answer`` when only part of its
    text was shown (a resumed stream, or a poll)."""

    response: Any
    replace_answer: bool


def reason(exc: Exception) -> str:
    """A short human reason for an SDK error."""
    if isinstance(exc, APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        return f"HTTP {exc.status_code}: {message or exc.message}"
    return str(exc) or type(exc).__name__


class RunFollower:
    def __init__(
        self,
        client: AsyncOpenAI,
        save: Callable[[], None],
        *,
        poll_interval: float,
        poll_limit: float,
        reattach_delays: Sequence[float],
        run_id: Callable[[str], str] = str,
    ) -> None:
        self.client = client
        self.run_id = run_id
        """The id ``client`` knows a run by, from the saved one."""
        self.save = save
        self.poll_interval = poll_interval
        self.poll_limit = poll_limit
        self.reattach_delays = reattach_delays
        self._received = 0
        """Stream events read from the server so far (any connection)."""

    async def follow(
        self, run: BackgroundRun
    ) -> AsyncGenerator[UIEvent | RunLost | RouteMissing | RunEnded, None]:
        """UI events of the run, ending with ``RunEnded`` or ``RunLost``, or a
        ``Notice`` when the connection is lost for good (``RouteMissing``
        when the follow address does not exist: nothing was read)."""
        partial = run.sequence >= 0
        stream_state = StreamState()
        response: Any = None
        polling = False
        deadline = time.monotonic() + self.poll_limit
        failures = 0
        while response is None:
            before = run.sequence
            try:
                if polling:
                    response = await self._poll(run, deadline)
                    if response is None:
                        yield Notice(
                            "error",
                            "The background run is still going after "
                            f"{self.poll_limit:g} s of waiting; send a "
                            "message to follow it again.",
                        )
                        return
                else:
                    received = self._received
                    answered = False
                    try:
                        attached = self._attach(run, stream_state, partial)
                        async with aclosing(attached) as events:
                            async for streamed in events:
                                if isinstance(streamed, StreamFinished):
                                    response = streamed.response
                                else:
                                    yield streamed
                        answered = True
                    except StreamError:
                        answered = True  # ended early: the snapshot tells
                    except (APIConnectionError, httpx.HTTPError):
                        pass  # dropped: the snapshot tells
                    silent = self._received == received
                    if response is None:
                        response = await self._terminal_snapshot(run)
                        # Settled by the snapshot after a silent stream (one
                        # that returned only when the run had ended): none of
                        # the answer was shown, so the whole text replaces it.
                        partial = partial or (response is not None and silent)
                    if response is None and answered and silent:
                        # Not a stream (a JSON snapshot) or an empty one: the
                        # gateway cannot stream a retrieve, so poll instead.
                        polling = partial = True
                        deadline = time.monotonic() + self.poll_limit
                        yield Notice("info", NO_EVENTS_NOTICE)
                        continue
            except APIStatusError as exc:
                if route_missing(exc) and self._received == 0:
                    yield RouteMissing()
                    return
                if exc.status_code == 404:
                    yield RunLost()
                    return
                if not polling:
                    polling = partial = True
                    deadline = time.monotonic() + self.poll_limit
                    yield Notice(
                        "info",
                        f"The run's stream is unavailable ({reason(exc)}); "
                        "following it by polling.",
                    )
                    continue
            except (OpenAIError, httpx.HTTPError):
                pass  # the server is out of reach: try again after a pause
            finally:
                self.save()  # keeps the last sequence number seen
            if response is not None:
                break
            failures = 0 if run.sequence > before else failures + 1
            if failures > len(self.reattach_delays):
                yield Notice(
                    "error",
                    "Lost the connection to the background run; it keeps "
                    "running. Send a message to follow it again.",
                )
                return
            if failures:
                await asyncio.sleep(self.reattach_delays[failures - 1])
        yield RunEnded(response, replace_answer=partial or stream_state.skipped)

    async def _attach(
        self, run: BackgroundRun, stream_state: StreamState, partial: bool
    ) -> AsyncGenerator[UIEvent | StreamFinished, None]:
        """One connection to the run's event stream, after ``run.sequence``."""
        stream = await self.client.responses.retrieve(
            self.run_id(run.response_id), stream=True, starting_after=run.sequence
        )
        async with (
            owned(stream),
            aclosing(self._tracked(stream, run)) as events,
            aclosing(read_stream(events, stream_state, partial=partial)) as reader,
        ):
            async for streamed in reader:
                yield streamed

    async def _tracked(
        self, events: AsyncIterable[Any], run: BackgroundRun
    ) -> AsyncGenerator[Any, None]:
        """The events after ``run.sequence``, moving it along (saved at most
        every ``SAVE_INTERVAL`` seconds while streaming)."""
        saved = time.monotonic()
        iterator = aiter(events)
        try:
            async for event in iterator:
                self._received += 1
                sequence = getattr(event, "sequence_number", None)
                if isinstance(sequence, int):
                    if sequence <= run.sequence:
                        continue  # already shown
                    run.sequence = sequence
                    if time.monotonic() - saved >= SAVE_INTERVAL:
                        self.save()
                        saved = time.monotonic()
                yield event
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _terminal_snapshot(self, run: BackgroundRun) -> Any:
        """The run's snapshot if it is terminal (a cancelled run's stream just
        ends without a terminal event), else ``None``."""
        snapshot = await self.client.responses.retrieve(self.run_id(run.response_id))
        return snapshot if snapshot.status in TERMINAL_STATUSES else None

    async def _poll(self, run: BackgroundRun, deadline: float) -> Any:
        """The run's snapshot once it is terminal, or ``None`` when it is
        still going at ``deadline`` (a ``time.monotonic`` value)."""
        while True:
            snapshot = await self.client.responses.retrieve(
                self.run_id(run.response_id)
            )
            if snapshot.status in TERMINAL_STATUSES:
                return snapshot
            if time.monotonic() + self.poll_interval > deadline:
                return None
            await asyncio.sleep(self.poll_interval)
