"""uvicorn serving an ASGI app from a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn
from lgos_stack.net import LOOPBACK, STARTUP_SECONDS


class ThreadServer:
    """Serves ``app`` on a loopback port it bound itself (no port race).

    ``with ThreadServer(app) as server:`` (or ``start()`` ... ``stop()``)
    returns once uvicorn started (the app's lifespan startup ran);
    ``server.url`` is ``http://127.0.0.1:<port>``.
    """

    def __init__(self, app: Any, startup_timeout: float = STARTUP_SECONDS) -> None:
        self._socket = socket.socket()
        self._socket.bind((LOOPBACK, 0))
        self.port: int = int(self._socket.getsockname()[1])
        self.url = f"http://{LOOPBACK}:{self.port}"
        self._startup_timeout = startup_timeout
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def __enter__(self) -> ThreadServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ThreadServer:
        """Serve; returns once uvicorn started."""
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout
        while not self.server.started:
            if not self._thread.is_alive():
                self._socket.close()
                raise RuntimeError(f"uvicorn at {self.url} stopped during startup")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"uvicorn at {self.url} did not start in time")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for its thread."""
        self.server.should_exit = True
        self._thread.join(timeout=15)
        self._socket.close()
