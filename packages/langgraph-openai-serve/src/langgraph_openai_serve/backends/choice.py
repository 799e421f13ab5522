"""The backend the settings describe: chosen once, when a server or a worker
builds its services, and by ``lgos db-setup``.

``LGOS_RESPONSE_STORE=postgres`` or ``LGOS_BACKGROUND_BACKEND=postgres``
choose PostgreSQL on ``LGOS_DATABASE_URL`` (with procrastinate's queue only
for the second: background runs of worker processes live where every
process sees them); anything else keeps everything in this process.
"""

from __future__ import annotations

from langgraph_openai_serve.backends.memory import MemoryBackend
from langgraph_openai_serve.backends.protocol import Backend
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.settings import Settings

POOL_SPARE_CONNECTIONS = 4
"""Pool connections beyond one per concurrent job: API requests, the
readiness check and the queue's statistics."""


def backend_for(settings: Settings) -> Backend:
    """The backend of ``settings``, built and not yet connected.

    Raises:
        GraphConfigurationError: PostgreSQL without ``LGOS_DATABASE_URL``, or
            background runs on PostgreSQL with Responses kept in memory.
    """
    queue = settings.BACKGROUND_BACKEND == "postgres"
    if queue and settings.RESPONSE_STORE == "memory":
        raise GraphConfigurationError(
            "LGOS_BACKGROUND_BACKEND=postgres keeps background Responses in "
            "PostgreSQL, so the response store must be too: set "
            "LGOS_RESPONSE_STORE=postgres."
        )
    if not queue and settings.RESPONSE_STORE != "postgres":
        return MemoryBackend(
            concurrency=settings.BACKGROUND_CONCURRENCY, fair=fair_share(settings)
        )
    needed_by = (
        "LGOS_RESPONSE_STORE=postgres"
        if settings.RESPONSE_STORE == "postgres"
        else "LGOS_BACKGROUND_BACKEND=postgres"
    )
    return postgres_backend(settings, needed_by, queue=queue)


def postgres_backend(
    settings: Settings, needed_by: str, *, queue: bool = True
) -> Backend:
    """The PostgreSQL backend on ``LGOS_DATABASE_URL``, whatever the other
    settings choose (``lgos db-setup`` sets all of it up).

    Raises:
        GraphConfigurationError: no ``LGOS_DATABASE_URL``; ``needed_by`` says
            what asked for it.
    """
    if settings.DATABASE_URL is None:
        raise GraphConfigurationError(f"{needed_by} needs LGOS_DATABASE_URL.")
    from langgraph_openai_serve.backends.postgres import PostgresBackend

    return PostgresBackend(
        settings.DATABASE_URL.get_secret_value(),
        pool_size=settings.BACKGROUND_CONCURRENCY + POOL_SPARE_CONNECTIONS,
        queue=queue,
        concurrency=settings.BACKGROUND_CONCURRENCY,
        stalled_timeout=settings.WORKER_STALLED_TIMEOUT,
        count_reruns=settings.METRICS_ENABLED,
        timeout=settings.DATABASE_TIMEOUT,
        connect_timeout=settings.DATABASE_CONNECT_TIMEOUT,
        queue_wait=settings.QUEUE_DATABASE_WAIT,
        checkpoint_timeout=settings.CHECKPOINT_TIMEOUT,
        fair=fair_share(settings),
    )


def fair_share(settings: Settings) -> FairShare:
    """How the queue's slots are shared: the tenants' weights and aging."""
    return FairShare(
        weights={
            scope: own.weight
            for scope, own in settings.TENANT_LIMITS.items()
            if own.weight != 1.0
        },
        aging=settings.QUEUE_AGING,
    )
