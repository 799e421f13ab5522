"""Shared fixtures: each docs sample app served by a real uvicorn on a free port.

The server runs in a thread of the test process, so the samples' imports
(LangGraph, FastAPI) are paid once per session instead of once per sample.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from lgos_testkit import ThreadServer
from openai import OpenAI

DOCS = Path(__file__).resolve().parents[1]
SAMPLES = DOCS / "samples"
sys.path.insert(0, str(SAMPLES))


class SampleServer:
    """One sample's ``app`` under uvicorn, in a thread, over TCP."""

    def __init__(self, module: str) -> None:
        # Import fresh: samples read LGOS_* settings when they build the app.
        sys.modules.pop(module, None)
        self.module = importlib.import_module(module)
        self.clients: list[OpenAI] = []
        self.server = ThreadServer(self.module.app).start()

    @property
    def base_url(self) -> str:
        return f"{self.server.url}/v1"

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
        self.server.stop()


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
