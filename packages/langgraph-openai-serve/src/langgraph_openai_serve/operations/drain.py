"""``lgos serve``'s drain: not-ready at once on SIGTERM, serving for
``LGOS_DRAIN_DELAY`` seconds, then uvicorn's own graceful shutdown.

A balancer or a Kubernetes Service keeps sending requests to a process for a
while after it was told to stop (until its readiness probe fails, or its
endpoint is removed). Closing the port at once refuses those requests; so on
SIGTERM the process first turns ``/health/ready`` to 503 and goes on serving,
answering each request with ``Connection: close`` so keep-alive clients
reconnect (to another process) for their next one. After the delay it hands
the signal to uvicorn, which stops accepting, closes idle connections and
gives in-flight requests ``LGOS_SHUTDOWN_TIMEOUT`` seconds; followers of
background runs end at that moment (``Lifecycle.stop``), cleanly, and
re-attach elsewhere.

SIGINT (Ctrl+C), a second SIGTERM or a delay of 0 skip the wait. uvicorn
captures the signals with ``signal.signal`` around its whole serve (one
process, or each ``--workers`` child); the app's lifespan startup runs inside
it, which is where ``drain_on_sigterm`` puts its handler in front of
uvicorn's, and its shutdown puts uvicorn's back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import FrameType
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from langgraph_openai_serve.operations.lifecycle import Lifecycle

logger = logging.getLogger("langgraph_openai_serve")

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_CLOSE = (b"connection", b"close")
SignalHandler = Callable[[int, FrameType | None], Any]


def drain_on_sigterm(app: FastAPI, lifecycle: Lifecycle, delay: float) -> None:
    """Give ``app`` (served by uvicorn) the drain described above."""
    app.add_middleware(CloseWhileDraining, lifecycle=lifecycle)
    host_lifespan = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        context: AbstractAsyncContextManager[Any] = host_lifespan(app)
        async with context as state:
            with _signals_drained(lifecycle, delay):
                yield state

    app.router.lifespan_context = lifespan


class CloseWhileDraining:
    """Adds ``Connection: close`` to every response while the process drains."""

    def __init__(self, app: ASGIApp, *, lifecycle: Lifecycle) -> None:
        self.app = app
        self.lifecycle = lifecycle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.lifecycle.draining:
            await self.app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), _CLOSE]
            await send(message)

        await self.app(scope, receive, send_closing)


@contextlib.contextmanager
def _signals_drained(lifecycle: Lifecycle, delay: float) -> Iterator[None]:
    """Put the drain in front of the server's SIGTERM and SIGINT handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield  # no signals here (and uvicorn installed none either)
        return
    servers = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    handlers = {sig: h for sig, h in servers.items() if callable(h)}
    drain = _Drain(lifecycle, delay, asyncio.get_running_loop(), handlers)
    for sig in handlers:
        signal.signal(sig, drain.on_signal)
    try:
        yield
    finally:
        for sig, handler in servers.items():
            signal.signal(sig, handler)


class _Drain:
    def __init__(
        self,
        lifecycle: Lifecycle,
        delay: float,
        loop: asyncio.AbstractEventLoop,
        servers: dict[signal.Signals, SignalHandler],
    ) -> None:
        self.lifecycle = lifecycle
        self.delay = delay
        self.loop = loop
        self.servers = servers
        self.timer: asyncio.TimerHandle | None = None
        self.handed_over = False

    def on_signal(self, sig: int, frame: FrameType | None) -> None:
        """The signal handler: anything beyond flags goes to the loop."""
        if self.handed_over:
            self.servers[signal.Signals(sig)](sig, frame)  # e.g. a forced exit
            return
        self.loop.call_soon_threadsafe(self._signalled, signal.Signals(sig))

    def _signalled(self, sig: signal.Signals) -> None:
        if self.handed_over:
            return
        if sig == signal.SIGTERM and self.delay > 0 and self.timer is None:
            self.lifecycle.drain()
            logger.info("lgos.draining delay_s=%g", self.delay)
            self.timer = self.loop.call_later(self.delay, self._hand_over, sig)
            return
        if self.timer is not None:
            self.timer.cancel()
        self._hand_over(sig)

    def _hand_over(self, sig: signal.Signals) -> None:
        self.handed_over = True
        since = self.lifecycle.draining_since
        self.lifecycle.stop()
        drained = time.monotonic() - since if since is not None else 0.0
        logger.info("lgos.stopping signal=%s drained_s=%.2f", sig.name, drained)
        self.servers[sig](sig, None)
