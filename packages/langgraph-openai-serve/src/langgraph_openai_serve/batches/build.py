"""The batch runtime the settings describe, built when a server binds.

With the PostgreSQL background backend, batches live in PostgreSQL (on the
response store's pool) and their steps go on the same procrastinate queue
as background Responses, so ``lgos worker`` runs both; otherwise they run
in this process.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.batches.files import FilesClient
from langgraph_openai_serve.batches.memory import (
    InMemoryBatchStore,
    InProcessBatchQueue,
)
from langgraph_openai_serve.batches.protocol import BatchQueue, BatchStore
from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.settings import Settings


def batch_runtime(
    settings: Settings, registry: GraphRegistry, background: Any = None
) -> BatchRuntime:
    """``background``: the server's ``BackgroundRuntime``, if any."""
    from langgraph_openai_serve.batches import steps

    runtime = BatchRuntime(
        store=InMemoryBatchStore(),
        queue=InProcessBatchQueue(lambda step: steps.give_up(runtime, step)),
        files=files_client(settings),
        known_model=lambda model: model in registry.registry,
        concurrency=settings.BATCH_CONCURRENCY,
        lines_per_job=settings.BATCH_LINES_PER_JOB,
        window_seconds=settings.BATCH_COMPLETION_WINDOW.total_seconds(),
        expiry_check_interval=settings.BATCH_EXPIRY_CHECK_INTERVAL,
    )
    durable = _on_postgres(background)
    if durable is not None:
        store, make_queue = durable
        runtime.store = store
        runtime.queue = make_queue(lambda step: steps.give_up(runtime, step))
    return runtime


def _on_postgres(background: Any) -> tuple[BatchStore, Any] | None:
    if background is None:
        return None
    from langgraph_openai_serve.background.postgres.queue import ProcrastinateBackend

    backend = background.backend
    if not isinstance(backend, ProcrastinateBackend):
        return None
    from langgraph_openai_serve.batches.postgres import PostgresBatchStore
    from langgraph_openai_serve.batches.queue import ProcrastinateBatchQueue

    def make_queue(give_up: Any) -> BatchQueue:
        return ProcrastinateBatchQueue(backend, give_up)

    return PostgresBatchStore(background.store), make_queue


def files_client(settings: Settings) -> FilesClient | None:
    if settings.BATCH_FILES_URL is None or settings.BATCH_FILES_API_KEY is None:
        return None
    return FilesClient(
        settings.BATCH_FILES_URL, settings.BATCH_FILES_API_KEY.get_secret_value()
    )
