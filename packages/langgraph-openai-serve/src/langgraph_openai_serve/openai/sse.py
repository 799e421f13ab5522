"""Server-Sent Events: framing, keepalive and disconnect cancellation.

``EventStreamResponse`` runs the frame producer (the graph run and its
encoder) in one task and writes from the request task. Frames cross a list
once; when several are waiting they go out in a single write. While the
producer is silent a ``: ping`` comment is sent every ``ping_interval``
seconds. A client that disconnects cancels the producer at once, even while
the graph is silent. When the server cancels the response itself (its
shutdown deadline passed), the stream still ends the protocol's way: the
frames already made, then the ``on_cut`` frame, instead of a bare close. A
stream that can be resumed elsewhere (a background run's, from
``starting_after``) is given ``ends_with``: when that lifecycle stops, the
stream ends cleanly after its last whole event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from langgraph_openai_serve.operations.lifecycle import Lifecycle

logger = logging.getLogger("langgraph_openai_serve")

PING_FRAME = b": ping\n\n"
DONE_FRAME = b"data: [DONE]\n\n"
DEFAULT_PING_INTERVAL = 15.0
_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def data_frame(payload: str) -> bytes:
    """One ``data:`` event carrying a JSON payload (which has no newlines)."""
    return b"data: " + payload.encode() + b"\n\n"


class _Mailbox:
    """A single-consumer frame queue with one wake-up future at a time.

    Kept small: every open stream holds one for its whole life (a list, not
    a deque, and a flag, not an ``asyncio.Event``: about 1.5 KiB less each).
    """

    __slots__ = ("closed", "disconnected", "frames", "waiter")

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.disconnected = False
        """The client went away (the mailbox is closed too)."""

    def put(self, frame: bytes) -> None:
        self.frames.append(frame)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, idle_seconds: float) -> None:
        """Return when a frame or the close arrives, or after ``idle_seconds``."""
        if self.frames or self.closed:
            return
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        timer = loop.call_later(idle_seconds, _resolve, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self.waiter = None


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class EventStreamResponse(Response):
    """An ASGI response streaming the frames of ``frames``."""

    media_type = "text/event-stream"

    def __init__(
        self,
        frames: AsyncIterator[bytes],
        *,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        headers: list[tuple[bytes, bytes]] | None = None,
        on_cut: Callable[[], bytes] | None = None,
        ends_with: Lifecycle | None = None,
        active: Any = None,
    ) -> None:
        self.frames = frames
        self.ping_interval = ping_interval
        self.active = active
        """A gauge child counting the streams open now (``inc``/``dec``)."""
        self.on_cut = on_cut
        """The failure frame ending a stream the server cancels."""
        self.ends_with = ends_with
        """The process lifecycle whose stop ends this (resumable) stream."""
        self.status_code = 200
        self.background = None
        self.raw_headers = [*_HEADERS, *(headers or ())]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        active = self.active
        if active is None:
            await self._stream(receive, send)
            return
        active.inc()
        try:
            await self._stream(receive, send)
        finally:
            active.dec()

    async def _stream(self, receive: Receive, send: Send) -> None:
        mailbox = _Mailbox()
        await send(
            {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
        )
        producer = asyncio.create_task(self._produce(mailbox))
        watcher = asyncio.create_task(self._watch(receive, mailbox))
        # The frames made so far go out, then the stream's normal end. The
        # mailbox is closed here too: a producer cancelled before it ever ran
        # (the process stopped while this request was on its way) never
        # reaches its own ``finally``.
        unsubscribe = (
            self.ends_with.on_stop(lambda: _end(producer, mailbox))
            if self.ends_with is not None
            else None
        )
        body = b""
        try:
            while True:
                await mailbox.wait(self.ping_interval)
                if mailbox.disconnected:
                    return
                if mailbox.frames:
                    body = b"".join(mailbox.frames)
                    mailbox.frames.clear()
                elif mailbox.closed:
                    break
                else:
                    body = PING_FRAME
                await send(
                    {"type": "http.response.body", "body": body, "more_body": True}
                )
                body = b""
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            return  # the client went away while we were writing
        except asyncio.CancelledError:
            # Only the server cancels a response task (uvicorn, once its
            # graceful-shutdown deadline passed): stop the run, then tell the
            # client why the stream ends, in the protocol's own terms.
            producer.cancel()
            if self.on_cut is not None and not mailbox.disconnected:
                body += b"".join(mailbox.frames)
                if not mailbox.closed:  # the run had not ended on its own
                    body += self.on_cut()
                with contextlib.suppress(OSError):
                    await send(
                        {"type": "http.response.body", "body": body, "more_body": False}
                    )
            raise
        finally:
            if unsubscribe is not None:
                unsubscribe()
            watcher.cancel()
            producer.cancel()
            await _settle(producer, watcher)

    async def _produce(self, mailbox: _Mailbox) -> None:
        frames = self.frames
        try:
            async for frame in frames:
                mailbox.put(frame)
        except Exception:
            # Encoders turn graph failures into protocol events; reaching here
            # is a bug in LGOS itself, so the stream just ends.
            logger.exception("stream.producer_failed")
        finally:
            mailbox.close()
            aclose = getattr(frames, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()

    @staticmethod
    async def _watch(receive: Receive, mailbox: _Mailbox) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                mailbox.disconnected = True
                mailbox.close()
                return


def _end(producer: asyncio.Task[None], mailbox: _Mailbox) -> None:
    producer.cancel()
    mailbox.close()


async def _settle(*tasks: asyncio.Task[None]) -> None:
    """Wait for cancelled tasks to finish, even if our own task is cancelled."""
    waiting = asyncio.gather(*tasks, return_exceptions=True)
    try:
        await asyncio.shield(waiting)
    except asyncio.CancelledError:
        await waiting
        raise
