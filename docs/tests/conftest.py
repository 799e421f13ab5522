"""Shared fixtures: each docs sample app served by a real uvicorn on a free port.

The server runs in a thread of the test process, so the samples' imports
(LangGraph, FastAPI) are paid once per session instead of once per sample.
"""

from __future__ import annotations

import importlib
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from openai import OpenAI

DOCS = Path(__file__).resolve().parents[1]
SAMPLES = DOCS / "samples"
sys.path.insert(0, str(SAMPLES))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class SampleServer:
    """One sample's ``app`` under uvicorn, in a thread, over TCP."""

    def __init__(self, module: str) -> None:
        # Import fresh: samples read LGOS_* settings when they build the app.
        sys.modules.pop(module, None)
        self.module = importlib.import_module(module)
        self.port = free_port()
        config = uvicorn.Config(
            self.module.app, host="127.0.0.1", port=self.port, log_level="warning"
        )
        self.clients: list[OpenAI] = []
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the sample {module} did not start")
            time.sleep(0.02)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return httpx.get(f"{self.base_url}{path}", timeout=10, **kwargs)  # type: ignore[arg-type]

    def client(self, api_key: str = "unused") -> OpenAI:
        """An OpenAI SDK client of this server, closed when the server stops."""
        client = OpenAI(base_url=self.base_url, api_key=api_key, max_retries=0)
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def serve() -> Iterator[Callable[[str], SampleServer]]:
    """Start sample apps by module name; every one is stopped after the test."""
    started: list[SampleServer] = []

    def start(module: str) -> SampleServer:
        server = SampleServer(module)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def expected_output(name: str) -> str:
    """The output a page shows for a sample (``docs/samples/<name>``)."""
    return (SAMPLES / name).read_text()
