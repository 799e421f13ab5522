"""``lgos worker``: run background Responses and batch steps from the
PostgreSQL queue."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

from langgraph_openai_serve.background.executor import executor_for
from langgraph_openai_serve.batches.expiry import expire_forever
from langgraph_openai_serve.batches.steps import run_step
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.observability.exposition import MetricsSource
from langgraph_openai_serve.operations.health_port import HealthPort
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.operations.readiness import Readiness
from langgraph_openai_serve.operations.routes import operations_app
from langgraph_openai_serve.server import LanggraphOpenaiServe

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def run_worker(server: LanggraphOpenaiServe) -> None:
    """Drain the PostgreSQL background queue with the bound ``server``'s graphs.

    SIGTERM and SIGINT stop it gracefully: it turns not-ready, takes no new
    job, gives running ones ``LGOS_WORKER_SHUTDOWN_TIMEOUT`` seconds, then
    hands the rest back to the queue. A second signal ends it at once. With
    ``LGOS_WORKER_HEALTH_PORT`` set it serves the operations routes there
    until it exits.
    """
    from langgraph_openai_serve.background.postgres.queue import ProcrastinateBackend

    await server.graph_registry.resolve_all()
    state = server.openai_app.state.lgos
    runtime = state.background
    if runtime is None or not isinstance(runtime.backend, ProcrastinateBackend):
        raise GraphConfigurationError(
            "lgos worker needs LGOS_BACKGROUND_BACKEND=postgres."
        )
    settings = server.settings
    backend = runtime.backend
    batches = state.batches
    if batches is not None:  # batch steps share the queue
        await batches.ensure_started(lambda step: run_step(batches, step))
    await backend.start(executor_for(state, runtime))
    worker = backend.worker(
        concurrency=settings.BACKGROUND_CONCURRENCY,
        shutdown_timeout=settings.WORKER_SHUTDOWN_TIMEOUT,
        heartbeat_interval=settings.WORKER_HEARTBEAT_INTERVAL,
        stalled_check_interval=settings.WORKER_STALLED_CHECK_INTERVAL,
    )
    lifecycle = Lifecycle()
    health: HealthPort | None = None
    if settings.WORKER_HEALTH_PORT is not None:
        readiness = Readiness(
            lifecycle,
            {"queue": worker.check},
            stopping_reason="stopping: the worker takes no new job",
        )
        health = HealthPort(
            operations_app(
                readiness,
                MetricsSource(backend.queue_stats)
                if settings.METRICS_ENABLED
                else None,
            ),
            settings.WORKER_HEALTH_HOST,
            settings.WORKER_HEALTH_PORT,
        )

    def stop() -> None:
        lifecycle.stop()
        worker.stop()

    # Batches past their window expire even when none of their chunks runs.
    expiry = (
        asyncio.create_task(expire_forever(batches))
        if batches is not None and batches.files is not None
        else None
    )
    try:
        if health is not None:
            await health.start()
        with _stopped_by_signals(stop):
            lifecycle.start()
            await worker.run()
    finally:
        if expiry is not None:
            expiry.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await expiry
        if health is not None:
            await health.stop()
        await backend.stop()


@contextlib.contextmanager
def _stopped_by_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Call ``stop`` on the first SIGTERM or SIGINT; a second one gets the
    signal's default behaviour (SIGINT: KeyboardInterrupt, SIGTERM: exit)."""
    loop = asyncio.get_running_loop()

    def first_signal() -> None:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        stop()

    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, first_signal)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
