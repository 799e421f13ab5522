"""A small HTTP server inside a process that is not a web server (``lgos
worker``): uvicorn serving an ASGI app on the process's own event loop.

The process keeps its own signal handling: uvicorn's is switched off here,
and the process stops the server when it is done (``stop``), so probes keep
getting answers (503 while stopping) until the very end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator

import uvicorn
from starlette.types import ASGIApp

logger = logging.getLogger("langgraph_openai_serve")


class HealthPortError(RuntimeError):
    """The server could not start (the port is taken, the host unknown...)."""


class _Server(uvicorn.Server):
    """uvicorn without signal handlers: its host process owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HealthPort:
    """Serves ``app`` on ``host:port`` from ``start()`` until ``stop()``."""

    def __init__(self, app: ASGIApp, host: str, port: int) -> None:
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            lifespan="off",
            access_log=False,
            log_config=None,
            timeout_graceful_shutdown=1,
        )
        self.host = host
        self._server = _Server(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The bound port (the chosen one when started on port 0)."""
        (server,) = self._server.servers
        return int(server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Return once the server listens; raise ``HealthPortError`` if it
        cannot (uvicorn logs why and exits its serve with ``SystemExit``)."""
        self._task = asyncio.create_task(self._serve(), name="lgos-health-port")
        while not self._server.started:
            if self._task.done():
                await self._task  # raises
                raise HealthPortError("the health port stopped while starting")
            await asyncio.sleep(0.01)
        logger.info("lgos.health_port listening=%s:%d", self.host, self.port)

    async def _serve(self) -> None:
        try:
            await self._server.serve()
        except SystemExit as exited:
            raise HealthPortError(
                f"cannot serve health on {self.host}:{self._server.config.port}"
            ) from exited

    async def stop(self) -> None:
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(HealthPortError):
            await self._task
