"""The fleet suite's clients: background runs submitted and followed,
foreground streams, cancels, each through a list of routes.

A route is a base URL: each API process when clients talk to the processes
directly, or the one balancer in front of them. A request a process refuses
(its connection refused, or closed before any answer) is tried on the next
route and counted as ``refused``; anything else that goes wrong is
``failed``. A follower reads a run's stream from another route than the one
that took it and, when the stream ends before the run does (its process
stopped), re-attaches on the next route with ``starting_after``, checking
that every sequence number comes once and in order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2
import openai
from openai import OpenAI

TERMINAL_EVENTS = {
    "response.completed": "completed",
    "response.failed": "failed",
    "response.incomplete": "incomplete",
    "response.cancelled": "cancelled",
}
T = TypeVar("T")
# The SDK's own HTTP client (httpx2) raises these while reading a stream.
TRANSPORT_ERRORS = (openai.APIConnectionError, httpx2.TransportError)


class Refused(Exception):
    """The process never answered: a refused or dropped connection."""


@dataclass
class Tally:
    """What the clients saw; shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    refused: int = 0
    """Attempts refused (each was tried again on the next route)."""
    refused_requests: int = 0
    """Requests that met at least one refusal before an answer."""
    requests: int = 0
    failed: list[str] = field(default_factory=list)
    foreground_ok: int = 0
    foreground_cut: list[str] = field(default_factory=list)
    reattached: int = 0

    def add(self, name: str, value: Any = 1) -> None:
        with self.lock:
            current = getattr(self, name)
            if isinstance(current, list):
                current.append(value)
            else:
                setattr(self, name, current + value)


def _never_answered(error: BaseException) -> bool:
    """A connection refused, or closed before the status line."""
    cause = error.__cause__ if isinstance(error, openai.APIConnectionError) else error
    if isinstance(cause, httpx2.ConnectError):
        return True
    return isinstance(cause, httpx2.RemoteProtocolError) and (
        "without sending" in str(cause) or "Server disconnected" in str(cause)
    )


class Routes:
    """SDK clients of each route, picked round robin from a start."""

    def __init__(self, base_urls: list[str], tally: Tally) -> None:
        self.clients = [
            OpenAI(base_url=url, api_key="x", max_retries=0, timeout=120)
            for url in base_urls
        ]
        self.tally = tally
        self._next = 0
        self._lock = threading.Lock()

    def next_index(self) -> int:
        with self._lock:
            self._next += 1
            return self._next % len(self.clients)

    def call(self, start: int, request: Callable[[OpenAI], T]) -> tuple[int, T]:
        """``request`` on route ``start``, then the next ones while they
        refuse (bounded: a whole fleet refusing for long is a failure)."""
        self.tally.add("requests")
        for attempt in range(200):
            index = (start + attempt) % len(self.clients)
            try:
                return index, request(self.clients[index])
            except TRANSPORT_ERRORS as error:
                if not _never_answered(error):
                    raise
                self.tally.add("refused")
                if attempt == 0:
                    self.tally.add("refused_requests")
                time.sleep(0.05 * min(attempt, 10))
        raise Refused(f"every route refused {attempt + 1} times")

    def close(self) -> None:
        for client in self.clients:
            client.close()


@dataclass
class Followed:
    """One background run, as its submitter and its follower saw it."""

    tag: str
    model: str
    response_id: str = ""
    taken_by: int = 0
    sequence: list[int] = field(default_factory=list)
    terminal: str | None = None
    output_text: str = ""
    ended_at: float = 0.0
    error: str | None = None


def submit(routes: Routes, run: Followed) -> None:
    """Create the background run (an idempotent retry when refused)."""
    index, created = routes.call(
        routes.next_index(),
        lambda client: client.responses.create(
            model=run.model,
            input=run.tag,
            background=True,
            extra_headers={"Idempotency-Key": f"fleet-{run.tag}"},
        ),
    )
    run.response_id, run.taken_by = created.id, index


def follow(routes: Routes, run: Followed) -> None:
    """Read the run's events to its end from another route than the one that
    took it, re-attaching on the next route whenever a stream ends while the
    run goes on (a cancelled run's stream ends with no terminal event: its
    snapshot says it ended)."""
    route = run.taken_by + 1
    try:
        while run.terminal is None:
            route, ended = routes.call(route, lambda c: _read(c, run))
            if ended:
                return
            # The stream ended early: its process stopped, or the run ended
            # without a terminal event (a cancel). The snapshot says which.
            route, snapshot = routes.call(
                route + 1, lambda c: c.responses.retrieve(run.response_id)
            )
            if snapshot.status in TERMINAL_EVENTS.values():
                run.terminal = str(snapshot.status)
                run.output_text = snapshot.output_text
                run.ended_at = time.monotonic()
                return
            routes.tally.add("reattached")
    except Exception as error:
        run.error = repr(error)
        routes.tally.add("failed", f"follow {run.tag}: {error!r}")


def _read(client: OpenAI, run: Followed) -> bool:
    """One stream from after the last event seen; whether the run ended."""
    after = run.sequence[-1] if run.sequence else -1
    with client.responses.retrieve(
        run.response_id, stream=True, starting_after=after
    ) as stream:
        for event in stream:
            run.sequence.append(event.sequence_number)
            if event.type in TERMINAL_EVENTS:
                run.terminal = TERMINAL_EVENTS[event.type]
                run.output_text = event.response.output_text
                run.ended_at = time.monotonic()
                return True
    return False


def cancel(routes: Routes, run: Followed) -> str:
    """Cancel through another route than the one that took the run."""
    _, cancelled = routes.call(
        run.taken_by + 2, lambda client: client.responses.cancel(run.response_id)
    )
    return str(cancelled.status)


def foreground(routes: Routes, stop: threading.Event, model: str) -> None:
    """Stream foreground Responses until ``stop``; a stream that began
    (its status line came) must end with ``response.completed``."""
    tally = routes.tally

    def stream_once(client: OpenAI) -> None:
        stream = client.responses.create(model=model, input="hello", stream=True)
        last = None
        try:
            with stream:
                for event in stream:
                    last = event.type
        except TRANSPORT_ERRORS as error:
            tally.add("foreground_cut", f"cut after {last}: {error!r}")
            return
        if last == "response.completed":
            tally.add("foreground_ok")
        else:
            tally.add("foreground_cut", f"ended after {last}")

    while not stop.is_set():
        try:
            routes.call(routes.next_index(), stream_once)
        except Exception as error:
            tally.add("failed", f"foreground: {error!r}")
