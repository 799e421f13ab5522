"""The batch runtime the settings describe, built when a server binds."""

from __future__ import annotations

from langgraph_openai_serve.batches.files import FilesClient
from langgraph_openai_serve.batches.memory import (
    InMemoryBatchStore,
    InProcessBatchQueue,
)
from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.settings import Settings


def batch_runtime(settings: Settings, registry: GraphRegistry) -> BatchRuntime:
    """Batches in this process (memory store, tasks)."""
    return BatchRuntime(
        store=InMemoryBatchStore(),
        queue=InProcessBatchQueue(),
        files=files_client(settings),
        known_model=lambda model: model in registry.registry,
        concurrency=settings.BATCH_CONCURRENCY,
        lines_per_job=settings.BATCH_LINES_PER_JOB,
        window_seconds=settings.BATCH_COMPLETION_WINDOW.total_seconds(),
    )


def files_client(settings: Settings) -> FilesClient | None:
    if settings.BATCH_FILES_URL is None or settings.BATCH_FILES_API_KEY is None:
        return None
    return FilesClient(
        settings.BATCH_FILES_URL, settings.BATCH_FILES_API_KEY.get_secret_value()
    )
