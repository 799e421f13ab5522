"""PostgreSQL for the demos: one shared pool, and the tables, set up once.

With ``DEMO_DATABASE_URL`` (or ``LGOS_DATABASE_URL``) set, the ``interrupts``
graph keeps its checkpoints in PostgreSQL (LangGraph's ``AsyncPostgresSaver``)
and leases runs with ``PostgresRunCoordinator``, and background runs go to
LGOS's PostgreSQL queue, drained by ``lgos worker``.

``lgos-demo-setup`` (``python -m lgos_demos.database``) creates every table
(LangGraph's checkpoints, LGOS's background and batch tables, procrastinate's
schema)
once, before any API process or worker starts: ``lgos-demo-stack`` runs it
to completion first.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TypeAlias

from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from lgos_demos.settings import DemoSettings

Pool: TypeAlias = AsyncConnectionPool[AsyncConnection[DictRow]]

POOL_KWARGS: dict[str, Any] = {
    "autocommit": True,
    "prepare_threshold": 0,
    "row_factory": dict_row,
}
"""What LangGraph's adapters and ``PostgresRunCoordinator`` need."""

POOL_MAX_SIZE = 8
MAX_CONCURRENT_LEASES = 4
"""Below ``POOL_MAX_SIZE``: leases must leave connections for checkpoints."""


def demo_pool(url: str) -> Pool:
    """A closed pool; the graph factory opens it at startup."""
    pool: Pool = AsyncConnectionPool(
        url,
        open=False,
        min_size=1,
        max_size=POOL_MAX_SIZE,
        timeout=10.0,
        kwargs=POOL_KWARGS,
    )
    return pool


async def setup_database(url: str) -> None:
    """Create every table the demos use (idempotent): what ``lgos db-setup``
    creates, which holds LangGraph's checkpoint tables too."""
    from langgraph_openai_serve.backends.postgres import PostgresBackend

    backend = PostgresBackend(url)
    try:
        await backend.setup()
    finally:
        await backend.close()


def main() -> None:
    settings = DemoSettings()
    if settings.DATABASE_URL is None:
        sys.exit("lgos-demo-setup: set DEMO_DATABASE_URL (or LGOS_DATABASE_URL)")
    asyncio.run(setup_database(settings.DATABASE_URL.get_secret_value()))
    sys.stdout.write("lgos-demo-setup: PostgreSQL tables are ready\n")


if __name__ == "__main__":
    main()
