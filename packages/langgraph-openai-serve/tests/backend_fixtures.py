"""A pytest plugin: the deployment backends the contract suites run over.

- ``backend`` (parametrized ``memory`` / ``postgres``): one empty backend of
  each kind, the PostgreSQL one with its queue, on the session's server, set
  up and emptied; every contract suite (``test_*_store*.py``,
  ``test_job_queue.py``, ``test_webhook_sender.py``,
  ``test_run_coordinators.py``) takes its store from it, so a third backend
  passes by being added here.
- ``batch_store``: the ``backend``'s ``BatchStore``, for the
  ``test_batch_store_*.py`` suites.
- ``postgres_backend_factory``: PostgreSQL backends on the session's server
  (``PostgresBackend`` options as keyword arguments), set up, emptied before
  the test's first, and closed after the test.
- ``faulty_database`` (module): a PostgreSQL of the module's own with the
  faults of a production database (``lgos_testkit.postgres``), set up as
  ``lgos db-setup`` sets one up.
- ``kept_backend`` (parametrized): a factory of empty backends keeping
  Responses for tests that drive them through the API
  (``make_client(graphs, backend=kept_backend)``): given the test's
  settings, a memory backend or PostgreSQL without its queue (background
  runs in the test's process), as ``LGOS_RESPONSE_STORE`` alone chooses.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeAlias

import psycopg
import pytest
from langgraph_openai_serve import Settings
from langgraph_openai_serve.backends import Backend
from langgraph_openai_serve.backends.memory import MemoryBackend
from langgraph_openai_serve.backends.memory.responses import InMemoryResponseStore
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.batches.protocol import BatchStore
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from lgos_testkit.postgres import FaultyPostgres

PostgresBackendFactory: TypeAlias = Callable[..., Awaitable[PostgresBackend]]
BackendFactory: TypeAlias = Callable[[Settings], Backend]

_EMPTY = (
    "TRUNCATE lgos_background_responses, lgos_conversations, lgos_batches CASCADE",
    "DELETE FROM procrastinate_jobs",
    "DELETE FROM procrastinate_workers",
)
_set_up: set[str] = set()


async def set_up_once(uri: str) -> None:
    """``lgos db-setup``'s work on the session's server, once."""
    if uri in _set_up:
        return
    backend = PostgresBackend(uri)
    try:
        await backend.setup()
    finally:
        await backend.close()
    _set_up.add(uri)


def empty(uri: str) -> None:
    """Forget every Response, Conversation, batch, job and worker."""
    with psycopg.connect(uri, autocommit=True) as conn:
        for statement in _EMPTY:
            conn.execute(statement)


@pytest.fixture
async def postgres_backend_factory(
    postgres_uri: str,
) -> AsyncIterator[PostgresBackendFactory]:
    made: list[PostgresBackend] = []

    async def make(**options: Any) -> PostgresBackend:
        if not made:  # a test's backends share one emptied database
            await set_up_once(postgres_uri)
            empty(postgres_uri)
        backend = PostgresBackend(postgres_uri, **options)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.close()


class WallClock:
    """The wall clock memory stores read (retention): a test moves it on;
    PostgreSQL keeps its own ``now()``."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def wall_clock() -> WallClock:
    return WallClock()


@pytest.fixture(params=["memory", "postgres"])
async def backend(
    request: pytest.FixtureRequest,
    postgres_backend_factory: PostgresBackendFactory,
    wall_clock: WallClock,
) -> AsyncIterator[Backend]:
    if request.param == "memory":
        memory = MemoryBackend(responses=InMemoryResponseStore(wall_clock=wall_clock))
        yield memory
        await memory.close()
        return
    yield await postgres_backend_factory()


@pytest.fixture
def batch_store(backend: Backend) -> BatchStore:
    return backend.batches


@pytest.fixture
def on_postgres(request: pytest.FixtureRequest) -> bool:
    """Whether this test runs over the PostgreSQL ``backend`` (for checks of
    its rows)."""
    return bool(request.node.callspec.params.get("backend") == "postgres")


@pytest.fixture(params=["memory", "postgres"])
async def kept_backend(
    request: pytest.FixtureRequest, postgres_uri: str
) -> AsyncIterator[BackendFactory]:
    if request.param == "postgres":
        await set_up_once(postgres_uri)
        empty(postgres_uri)
    made: list[Backend] = []

    def make(settings: Settings) -> Backend:
        built: Backend
        if request.param == "memory":
            built = MemoryBackend(concurrency=settings.BACKGROUND_CONCURRENCY)
        else:
            built = PostgresBackend(
                postgres_uri, queue=False, concurrency=settings.BACKGROUND_CONCURRENCY
            )
        made.append(built)
        return built

    yield make
    for built in made:
        await built.close()


@contextlib.asynccontextmanager
async def jobs_running(
    backend: Backend, *, concurrency: int = 4, shutdown_timeout: float = 5.0
) -> AsyncIterator[None]:
    """The backend's jobs run while the block does: PostgreSQL's under a
    worker loop of this process (as ``lgos worker`` runs them), the memory
    queue's as they are queued (it has no workers to start)."""
    try:
        worker = backend.jobs.worker(
            concurrency=concurrency,
            shutdown_timeout=shutdown_timeout,
            heartbeat_interval=1.0,
            stalled_check_interval=3600.0,
        )
    except GraphConfigurationError:
        yield  # the queue runs its jobs in this process
        return
    running = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        worker.stop()
        await running


@pytest.fixture(scope="module")
def faulty_database() -> Iterator[FaultyPostgres]:
    server = FaultyPostgres()
    try:
        asyncio.run(set_up_once(server.url))
        yield server
    finally:
        server.close()
