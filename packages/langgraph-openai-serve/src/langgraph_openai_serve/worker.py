"""``lgos worker``: run the jobs of the PostgreSQL queue (background
Responses, batch steps, webhook deliveries) with a deployment's services."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

from langgraph_openai_serve.batches.expiry import expire_forever
from langgraph_openai_serve.observability.exposition import MetricsSource
from langgraph_openai_serve.operations.health_port import HealthPort
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.operations.readiness import Readiness
from langgraph_openai_serve.operations.routes import operations_app
from langgraph_openai_serve.services import Services

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


async def run_worker(services: Services) -> None:
    """Drain the PostgreSQL queue with ``services`` (their graphs, stores and
    tasks; batch lines go through their OpenAI app, routes mounted).

    SIGTERM and SIGINT stop it gracefully: it turns not-ready, takes no new
    job, gives running ones ``LGOS_WORKER_SHUTDOWN_TIMEOUT`` seconds, then
    hands the rest back to the queue. A second signal ends it at once. With
    ``LGOS_WORKER_HEALTH_PORT`` set it serves the operations routes there
    until it exits.

    Raises:
        GraphConfigurationError: the backend runs its jobs in process (there
            is no queue for a worker to take them from).
    """
    settings = services.settings
    jobs = services.backend.jobs
    worker = jobs.worker(
        concurrency=settings.BACKGROUND_CONCURRENCY,
        shutdown_timeout=settings.WORKER_SHUTDOWN_TIMEOUT,
        heartbeat_interval=settings.WORKER_HEARTBEAT_INTERVAL,
        stalled_check_interval=settings.WORKER_STALLED_CHECK_INTERVAL,
    )
    await services.state.registry.resolve_all()
    batches = services.state.batches
    lifecycle = Lifecycle()
    health: HealthPort | None = None
    if settings.WORKER_HEALTH_PORT is not None:
        readiness = Readiness(
            lifecycle,
            {"queue": worker.check},
            stopping_reason="stopping",  # it takes no new job
        )
        health = HealthPort(
            operations_app(
                readiness,
                MetricsSource(jobs.stats, settings.tenant_class)
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
        await services.close()
        await services.backend.close()


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
