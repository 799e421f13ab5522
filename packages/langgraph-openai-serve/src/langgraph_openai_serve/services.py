"""``Services``: everything a deployment runs on, built once from its settings.

``build_services`` makes each long-lived object in dependence order, and
each constructor takes what it needs: the backend (``backends/``), the
observer, webhooks on the backend's queue, the runtimes of background
Responses and batches, and the ``ServeState`` every route reads. It
registers the queue's tasks (a background run, a batch step, a webhook
delivery) with the code that runs them. Nothing is wired by assignment
afterwards.

``LanggraphOpenaiServe.bind_openai_api`` mounts the routes on
``Services.openai_app``; ``lgos worker`` (``worker.py``) runs the queue with
the same services, and its batch lines go through that same app.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI

from langgraph_openai_serve.backends import Backend, backend_for
from langgraph_openai_serve.batches.dispatch import LineDispatcher
from langgraph_openai_serve.batches.files import FilesClient
from langgraph_openai_serve.batches.input import Limits
from langgraph_openai_serve.batches.jobs import step_task
from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.batches.steps import give_up, run_step
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.integrations.langfuse import (
    langfuse_callbacks,
    require_langfuse,
)
from langgraph_openai_serve.observability.exposition import MetricsSource
from langgraph_openai_serve.observability.observer import Observer
from langgraph_openai_serve.observability.tracing import build_tracer
from langgraph_openai_serve.openai.request_body import BodyLimits
from langgraph_openai_serve.openai.responses.background.execute import execute
from langgraph_openai_serve.openai.responses.background.task import background_task
from langgraph_openai_serve.openai.state import (
    CheckpointScope,
    ServeState,
    no_callbacks,
)
from langgraph_openai_serve.operations.admission import RunGate, RunLimits, TenantLimits
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.operations.readiness import Readiness
from langgraph_openai_serve.responses.runtime import BackgroundRuntime
from langgraph_openai_serve.settings import Settings, TenantLimitsSetting
from langgraph_openai_serve.webhooks.delivery import Deliverer
from langgraph_openai_serve.webhooks.events import EVENT_TYPES, Endpoint
from langgraph_openai_serve.webhooks.protocol import Announce, announce_nothing
from langgraph_openai_serve.webhooks.sender import QueuedSender
from langgraph_openai_serve.webhooks.service import Webhooks

TITLE = "LangGraph OpenAI Serve"


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    backend: Backend
    openai_app: FastAPI
    """The OpenAI application: its state is ``state``; its routes are
    mounted by ``bind_openai_api`` (a worker's batch lines go through it)."""
    state: ServeState
    observer: Observer
    lifecycle: Lifecycle
    webhooks: Webhooks | None
    readiness: Readiness
    """``/health/ready``: the lifecycle, then the backend's checks."""
    metrics: MetricsSource | None
    """``GET /metrics`` (``LGOS_METRICS_ENABLED``)."""

    async def close(self) -> None:
        """Stop the jobs running in this process and let go of what batches
        and webhooks hold (HTTP clients); the backend's pool stays open."""
        await self.backend.jobs.close()
        batches = self.state.batches
        if batches is not None and batches.files is not None:
            await batches.files.close()
        if self.webhooks is not None:
            await self.webhooks.sender.stop()


def build_services(
    settings: Settings,
    registry: GraphRegistry,
    checkpoint_scope: CheckpointScope,
    *,
    lifecycle: Lifecycle,
    backend: Backend | None = None,
    background: bool = False,
    tracer_provider: Any = None,
) -> Services:
    """The services of ``settings``: ``backend`` when given, else the one the
    settings choose; background Responses run when ``background`` is set,
    some graph declares them or their queue is PostgreSQL's.

    Raises:
        GraphConfigurationError: the settings name what cannot be built (a
            PostgreSQL backend without ``LGOS_DATABASE_URL``, Langfuse
            without its extra).
    """
    if settings.ENABLE_LANGFUSE:
        require_langfuse()
    backend = backend if backend is not None else backend_for(settings)
    openai_app = FastAPI(
        title=TITLE, version=library_version(), **settings.docs_kwargs()
    )
    observer = Observer.build(
        metrics=settings.METRICS_ENABLED, tracer=build_tracer(tracer_provider)
    )
    webhooks = _webhooks(settings, backend)
    announce = webhooks.announce if webhooks is not None else announce_nothing
    runtime = (
        _background(settings, backend, announce)
        if background or _runs_in_background(settings, registry)
        else None
    )
    batches = BatchRuntime(
        store=backend.batches,
        jobs=backend.jobs,
        files=_files(settings),
        dispatcher=LineDispatcher(openai_app),
        known_model=lambda model: model in registry.registry,
        concurrency=settings.BATCH_CONCURRENCY,
        lines_per_job=settings.BATCH_LINES_PER_JOB,
        limits=Limits(
            settings.BATCH_MAX_LINES,
            settings.BATCH_MAX_INPUT_BYTES,
            settings.BATCH_MAX_LINE_BYTES,
            settings.MAX_JSON_DEPTH,
        ),
        window_seconds=settings.BATCH_COMPLETION_WINDOW.total_seconds(),
        expiry_check_interval=settings.BATCH_EXPIRY_CHECK_INTERVAL,
        announce=announce,
    )
    keeps = settings.RESPONSE_STORE is not None
    state = ServeState(
        registry=registry,
        checkpoint_scope=checkpoint_scope,
        ping_interval=settings.SSE_PING_INTERVAL,
        created=int(time.time()),
        body_limits=BodyLimits(
            settings.MAX_REQUEST_BYTES,
            settings.MAX_JSON_DEPTH,
            settings.MAX_JSON_ELEMENTS,
        ),
        run_timeout=settings.RUN_TIMEOUT,
        callbacks=langfuse_callbacks if settings.ENABLE_LANGFUSE else no_callbacks,
        chat_status_as_reasoning=settings.CHAT_STATUS_AS_REASONING,
        responses_status_as_reasoning=settings.RESPONSES_STATUS_AS_REASONING,
        background=runtime,
        responses=backend.responses if keeps else None,
        conversations=backend.conversations if keeps else None,
        conversation_lease=settings.CONVERSATION_LOCK_SECONDS,
        batches=batches,
        lifecycle=lifecycle,
        observer=observer,
        gate=RunGate(_limits(settings)),
    )
    openai_app.state.lgos = state
    _register_tasks(backend, state)
    return Services(
        settings=settings,
        backend=backend,
        openai_app=openai_app,
        state=state,
        observer=observer,
        lifecycle=lifecycle,
        webhooks=webhooks,
        readiness=Readiness(lifecycle, backend.checks()),
        metrics=MetricsSource(
            backend.jobs.stats if runtime is not None else None,
            settings.tenant_class,
        )
        if settings.METRICS_ENABLED
        else None,
    )


def _limits(settings: Settings) -> RunLimits:
    default = TenantLimits(
        runs=settings.TENANT_MAX_RUNS,
        background=settings.TENANT_MAX_BACKGROUND,
        batches=settings.TENANT_MAX_BATCHES,
    )

    # A field left out takes the default; one set to null is unbounded.
    def own_or_default(own: TenantLimitsSetting) -> TenantLimits:
        given = own.model_dump(
            include=own.model_fields_set & {"runs", "background", "batches"}
        )
        return dataclasses.replace(default, **given)

    return RunLimits(
        process_runs=settings.MAX_RUNS,
        process_streams=settings.MAX_STREAMS,
        tenant=default,
        overrides={
            scope: own_or_default(own) for scope, own in settings.TENANT_LIMITS.items()
        },
    )


def _runs_in_background(settings: Settings, registry: GraphRegistry) -> bool:
    # The PostgreSQL queue also carries batches: a deployment that names it
    # gets it whether or not a graph runs in the background.
    return settings.BACKGROUND_BACKEND == "postgres" or any(
        config.supports(GraphFeature.BACKGROUND)
        for config in registry.registry.values()
    )


def _background(
    settings: Settings, backend: Backend, announce: Announce
) -> BackgroundRuntime:
    return BackgroundRuntime(
        store=backend.responses,
        jobs=backend.jobs,
        max_attempts=settings.BACKGROUND_MAX_ATTEMPTS,
        checkpointer=backend.checkpointer,
        announce=announce,
    )


def _register_tasks(backend: Backend, state: ServeState) -> None:
    """The queue's tasks, each with the code that runs its jobs."""
    runtime = state.background
    if runtime is not None:
        backend.jobs.register(
            background_task(
                runtime.store,
                partial(execute, state),
                cancel_poll_interval=runtime.cancel_poll_interval,
            )
        )
    batches = state.batches
    assert batches is not None
    backend.jobs.register(
        step_task(partial(run_step, batches), partial(give_up, batches))
    )


def _webhooks(settings: Settings, backend: Backend) -> Webhooks | None:
    """``None`` without ``LGOS_WEBHOOK_ENDPOINTS``; deliveries are jobs of
    the backend's queue."""
    if not settings.WEBHOOK_ENDPOINTS:
        return None
    deliverer = Deliverer(settings.webhook_secrets(), settings.WEBHOOK_TIMEOUT)
    sender = QueuedSender(
        backend.jobs, deliverer, settings.WEBHOOK_RETRY_FOR.total_seconds()
    )
    endpoints = [
        Endpoint(
            url=endpoint.url,
            scopes=frozenset(endpoint.scopes),
            events=frozenset(endpoint.events or EVENT_TYPES),
        )
        for endpoint in settings.WEBHOOK_ENDPOINTS
    ]
    return Webhooks(endpoints, sender)


def _files(settings: Settings) -> FilesClient | None:
    if settings.BATCH_FILES_URL is None or settings.BATCH_FILES_API_KEY is None:
        return None
    return FilesClient(
        settings.BATCH_FILES_URL, settings.BATCH_FILES_API_KEY.get_secret_value()
    )


def library_version() -> str:
    return version("langgraph-openai-serve")
