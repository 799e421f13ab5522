"""A real webhook receiver on a loopback port: it records what it gets and
answers with the statuses a test scripts (``fail_next``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from lgos_stack.net import async_wait_until, wait_until

from lgos_testkit.threads import ThreadServer


@dataclass(frozen=True)
class Received:
    body: bytes
    headers: dict[str, str]
    status: int
    """What the receiver answered."""


class WebhookReceiver:
    """``with WebhookReceiver() as receiver:`` serves ``receiver.url``; every
    POST is recorded in ``received`` (in arrival order)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._failures: list[int] = []
        self._lock = threading.Lock()
        self._server = ThreadServer(_Asgi(self))

    def fail_next(self, *statuses: int) -> None:
        """Answer the next deliveries with these statuses, then 200 again."""
        with self._lock:
            self._failures.extend(statuses)

    @property
    def url(self) -> str:
        return f"{self._server.url}/hook"

    def accepted(self) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.status == 200]

    def wait_for(self, count: int, timeout: float = 60) -> list[Received]:
        """Once ``count`` deliveries were answered 200: those deliveries."""
        wait_until(lambda: len(self.accepted()) >= count, timeout, "webhooks")
        return self.accepted()

    async def arrived(self, count: int, within: float = 60) -> list[Received]:
        """``wait_for`` without blocking the event loop (for senders in it)."""

        async def enough() -> bool:
            return len(self.accepted()) >= count

        await async_wait_until(enough, within, "webhooks")
        return self.accepted()

    async def serve(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        with self._lock:
            status = self._failures.pop(0) if self._failures else 200
            self.received.append(Received(body, headers, status))
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def __enter__(self) -> WebhookReceiver:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


class _Asgi:
    """An ASGI 3 app object (uvicorn takes a bound method for ASGI 2)."""

    def __init__(self, receiver: WebhookReceiver) -> None:
        self._receiver = receiver

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self._receiver.serve(scope, receive, send)
