"""``lgos worker``: run background Responses from the PostgreSQL queue."""

from __future__ import annotations

from langgraph_openai_serve.background.executor import executor_for
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.server import LanggraphOpenaiServe


async def run_worker(server: LanggraphOpenaiServe) -> None:
    """Drain the PostgreSQL background queue with the bound ``server``'s graphs.

    SIGTERM and SIGINT stop it gracefully: running jobs get
    ``LGOS_WORKER_SHUTDOWN_TIMEOUT`` seconds, then go back to the queue.
    """
    await server.graph_registry.resolve_all()
    state = server.openai_app.state.lgos
    runtime = state.background
    if runtime is None or not hasattr(runtime.backend, "run_worker"):
        raise GraphConfigurationError(
            "lgos worker needs LGOS_BACKGROUND_BACKEND=postgres and a graph with "
            "GraphFeature.BACKGROUND."
        )
    settings = server.settings
    await runtime.backend.run_worker(
        executor_for(state, runtime),
        concurrency=settings.BACKGROUND_CONCURRENCY,
        shutdown_timeout=settings.WORKER_SHUTDOWN_TIMEOUT,
        heartbeat_interval=settings.WORKER_HEARTBEAT_INTERVAL,
        stalled_check_interval=settings.WORKER_STALLED_CHECK_INTERVAL,
    )
