"""The stores and backend the settings describe, built when a server binds.

``LGOS_RESPONSE_STORE`` chooses the store that keeps Responses and
``LGOS_BACKGROUND_BACKEND`` where background runs go. There is one store:
background Responses live in the response store when one is set, so a
PostgreSQL deployment keeps everything in one table family on one pool.
Conversations are kept exactly when Responses are, beside them.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.background.memory import InMemoryResponseStore
from langgraph_openai_serve.background.protocol import ResponseStore
from langgraph_openai_serve.conversations.memory import InMemoryConversationStore
from langgraph_openai_serve.conversations.protocol import ConversationStore
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.openai.state import BackgroundRuntime
from langgraph_openai_serve.operations.readiness import Check
from langgraph_openai_serve.settings import Settings


def response_store(settings: Settings) -> ResponseStore | None:
    """The store ``LGOS_RESPONSE_STORE`` names; ``None`` when unset."""
    if settings.RESPONSE_STORE is None:
        return None
    if settings.RESPONSE_STORE == "postgres":
        store: ResponseStore = postgres_store(settings, "LGOS_RESPONSE_STORE=postgres")
        return store
    return InMemoryResponseStore()


def conversation_store(responses: ResponseStore | None) -> ConversationStore | None:
    """The Conversations kept beside ``responses`` (on the same PostgreSQL
    pool, or in memory); ``None`` when nothing is kept."""
    if responses is None:
        return None
    from langgraph_openai_serve.background.postgres.store import PostgresResponseStore

    if isinstance(responses, PostgresResponseStore):
        from langgraph_openai_serve.conversations.postgres import (
            PostgresConversationStore,
        )

        return PostgresConversationStore(responses)
    if isinstance(responses, InMemoryResponseStore):
        return InMemoryConversationStore(unfinished=responses.unfinished)
    return InMemoryConversationStore()


def postgres_store(settings: Settings, needed_by: str) -> Any:
    """A ``PostgresResponseStore`` on a new pool to ``LGOS_DATABASE_URL``."""
    if settings.DATABASE_URL is None:
        raise GraphConfigurationError(f"{needed_by} needs LGOS_DATABASE_URL.")
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import AsyncConnectionPool

    from langgraph_openai_serve.background.postgres.store import PostgresResponseStore

    # One pool for the store and the checkpoints of durable runs. A running
    # job uses it for its cancel watch, its events and its checkpoints, so it
    # grows with the worker's concurrency rather than queueing jobs behind
    # psycopg's default four connections.
    pool = AsyncConnectionPool(
        settings.DATABASE_URL.get_secret_value(),
        connection_class=AsyncConnection[DictRow],
        min_size=2,
        max_size=settings.BACKGROUND_CONCURRENCY + 4,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    return PostgresResponseStore(pool)


def postgres_background(
    settings: Settings, store: ResponseStore | None = None
) -> BackgroundRuntime:
    """The PostgreSQL store and procrastinate backend ``settings`` describe;
    ``store``: the PostgreSQL response store to share.

    Raises:
        GraphConfigurationError: no ``LGOS_DATABASE_URL``, or a response
            store that is not PostgreSQL's (background jobs of worker
            processes must live where every process sees them).
    """
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from langgraph_openai_serve.background.postgres.queue import ProcrastinateBackend
    from langgraph_openai_serve.background.postgres.store import PostgresResponseStore

    if store is not None and not isinstance(store, PostgresResponseStore):
        raise GraphConfigurationError(
            "LGOS_BACKGROUND_BACKEND=postgres keeps background Responses in "
            "PostgreSQL, so the response store must be too: set "
            "LGOS_RESPONSE_STORE=postgres."
        )
    postgres = store or postgres_store(settings, "LGOS_BACKGROUND_BACKEND=postgres")
    url = settings.DATABASE_URL.get_secret_value()  # type: ignore[union-attr]
    backend = ProcrastinateBackend(
        url,
        postgres,
        stalled_timeout=settings.WORKER_STALLED_TIMEOUT,
        count_reruns=settings.METRICS_ENABLED,
    )
    pool = postgres.pool
    return BackgroundRuntime(
        store=postgres,
        backend=backend,
        max_attempts=settings.BACKGROUND_MAX_ATTEMPTS,
        checkpointer_factory=lambda: AsyncPostgresSaver(pool),
    )


def readiness_checks(
    responses: ResponseStore | None, background: BackgroundRuntime | None
) -> dict[str, Check]:
    """What ``/health/ready`` checks of the stores and queue in use:
    PostgreSQL (answers, has LGOS's tables) and the queue (has its own)."""
    from langgraph_openai_serve.background.postgres.queue import ProcrastinateBackend
    from langgraph_openai_serve.background.postgres.store import PostgresResponseStore

    checks: dict[str, Check] = {}
    store = responses or (background.store if background is not None else None)
    if isinstance(store, PostgresResponseStore):
        checks["postgres"] = store.check
    if background is not None and isinstance(background.backend, ProcrastinateBackend):
        checks["queue"] = background.backend.check
    return checks
