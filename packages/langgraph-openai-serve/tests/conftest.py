"""Shared fixtures: the app under test and real OpenAI clients."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_openai_serve import (
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_testkit import STARTUP_SECONDS, RunningProcess, free_port, start_process
from openai import AsyncOpenAI, OpenAI

pytest_plugins = [
    "postgres_fixtures",
    "backend_fixtures",
    "background_fixtures",
    "batch_fixtures",
    "batch_stack",
]

TESTS_DIR = Path(__file__).parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ClientFactory = Callable[..., AsyncOpenAI]


@pytest.fixture
async def make_client() -> AsyncIterator[ClientFactory]:
    """Build an app for a registry and an ``AsyncOpenAI`` client bound to it
    in-process (ASGI transport)."""
    http_clients: list[httpx.AsyncClient] = []

    def make(
        graphs: dict[str, GraphConfig],
        *,
        backend: Callable[[Settings], Any] | None = None,
        **settings: Any,
    ) -> AsyncOpenAI:
        if backend is not None:
            # The setting switches keeping on; the backend given keeps them.
            settings.setdefault("RESPONSE_STORE", "memory")
        chosen = Settings(**settings)
        server = LanggraphOpenaiServe(
            graphs=GraphRegistry(registry=graphs),
            settings=chosen,
            backend=backend(chosen) if backend is not None else None,
        ).bind_openai_api()
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=server.app),
            base_url="http://lgos.test",
        )
        http_clients.append(http)
        return AsyncOpenAI(
            base_url="http://lgos.test/v1",
            api_key="unused",
            http_client=http,
            max_retries=0,
        )

    yield make
    for http in http_clients:
        await http.aclose()


class LiveServer:
    """A real uvicorn process serving an app factory of the tests over TCP."""

    def __init__(
        self,
        marker_dir: Path,
        ping_interval: float = 15.0,
        *,
        factory: str = "live_app:create_app",
        env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.marker_dir = marker_dir
        environment = {
            **os.environ,
            "PYTHONPATH": str(TESTS_DIR),
            "LGOS_TEST_MARKER_DIR": str(marker_dir),
            "LGOS_SSE_PING_INTERVAL": str(ping_interval),
            **(env or {}),
        }
        self.server = start_process(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                factory,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
            ],
            log=marker_dir / f"uvicorn-{self.port}.log",
            name="the live LGOS server",
            env=environment,
        )
        try:
            self.server.wait_healthy(f"{self.base_url}/health", STARTUP_SECONDS)
        except BaseException:
            self.server.stop()
            raise

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def kill(self) -> None:
        """Stop at once, as a crash would (SIGKILL)."""
        self.server.stop(signal.SIGKILL, timeout=5)

    def stop(self) -> None:
        self.server.stop(timeout=5)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One uvicorn process for the session; pings every 0.2 s of silence."""
    server = LiveServer(tmp_path_factory.mktemp("markers"), ping_interval=0.2)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def quiet_live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server that never pings within a test, so only the disconnect watcher
    can notice a client leaving a silent stream."""
    server = LiveServer(tmp_path_factory.mktemp("quiet-markers"), ping_interval=600)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def reference_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """``reference_app.py``: the reference's examples, served by uvicorn."""
    server = LiveServer(
        tmp_path_factory.mktemp("reference"), factory="reference_app:create_app"
    )
    yield server
    server.stop()


@pytest.fixture
def sdk(reference_server: LiveServer) -> OpenAI:
    """The official SDK, on ``reference_server``."""
    return OpenAI(base_url=reference_server.base_url, api_key="unused", max_retries=0)


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``PYTHONPYCACHEPREFIX`` the test's subprocesses share, so each one
    does not compile every module again (``PYTHONDONTWRITEBYTECODE`` is set
    on these machines)."""
    return tmp_path_factory.mktemp("pycache")


@dataclass(frozen=True)
class LgosServe:
    """A real ``lgos serve`` process and the base URL of its OpenAI API."""

    process: RunningProcess
    base_url: str


def start_lgos_serve(log_dir: Path, registry: str, **env: str) -> LgosServe:
    """Start ``lgos serve`` for ``registry`` on a free port; return once it
    answers. Stop it with ``.process.stop()`` (SIGTERM by PID)."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    process = start_process(
        [sys.executable, "-m", "langgraph_openai_serve.cli", "serve"],
        log=log_dir / f"lgos-serve-{port}.log",
        name="lgos serve",
        env={
            **os.environ,
            "PYTHONPATH": str(TESTS_DIR),
            "LGOS_TEST_MARKER_DIR": str(log_dir),
            "LGOS_REGISTRY": registry,
            "LGOS_PORT": str(port),
            "LGOS_LOG_FORMAT": "text",
            **env,
        },
    )
    try:
        process.wait_healthy(f"{base_url}/health", STARTUP_SECONDS)
    except BaseException:
        process.stop()
        raise
    return LgosServe(process, base_url)
