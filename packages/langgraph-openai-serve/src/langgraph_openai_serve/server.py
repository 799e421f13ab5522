"""``LanggraphOpenaiServe``: mounts the OpenAI API for a graph registry."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Mount

from langgraph_openai_serve.background.build import (
    conversation_store,
    postgres_background,
    readiness_checks,
    response_store,
)
from langgraph_openai_serve.background.memory import (
    InMemoryResponseStore,
    InProcessBackend,
)
from langgraph_openai_serve.background.protocol import BackgroundBackend, ResponseStore
from langgraph_openai_serve.background.retention import sweep_forever
from langgraph_openai_serve.batches.build import batch_runtime
from langgraph_openai_serve.batches.dispatch import LineDispatcher
from langgraph_openai_serve.batches.expiry import expire_forever
from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.host import HostApp
from langgraph_openai_serve.integrations.langfuse import (
    langfuse_callbacks,
    require_langfuse,
)
from langgraph_openai_serve.observability.exposition import MetricsSource
from langgraph_openai_serve.observability.observer import Observer
from langgraph_openai_serve.observability.queue import QueueProbe
from langgraph_openai_serve.observability.tracing import build_tracer
from langgraph_openai_serve.openai import health
from langgraph_openai_serve.openai.batches import routes as batch_routes
from langgraph_openai_serve.openai.batches.schemas import BatchCreateRequest
from langgraph_openai_serve.openai.chat import routes as chat_routes
from langgraph_openai_serve.openai.chat.schemas import ChatCompletionRequest
from langgraph_openai_serve.openai.context import RequestContextMiddleware
from langgraph_openai_serve.openai.conversations import routes as conversation_routes
from langgraph_openai_serve.openai.errors import (
    install_error_handlers,
    install_http_error_handler,
)
from langgraph_openai_serve.openai.models import routes as model_routes
from langgraph_openai_serve.openai.request_body import BodyLimits, document_bodies
from langgraph_openai_serve.openai.responses import routes as response_routes
from langgraph_openai_serve.openai.responses import stored as stored_routes
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import (
    BackgroundRuntime,
    CheckpointScope,
    ServeState,
    no_callbacks,
)
from langgraph_openai_serve.openai.tenancy import scope_resolver
from langgraph_openai_serve.operations import routes as operations_routes
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.operations.readiness import Readiness
from langgraph_openai_serve.routing import add_routes
from langgraph_openai_serve.settings import Settings, normalize_prefix
from langgraph_openai_serve.webhooks.build import webhooks_for
from langgraph_openai_serve.webhooks.service import Webhooks

__all__ = ["LanggraphOpenaiServe", "postgres_background"]

logger = logging.getLogger("langgraph_openai_serve")

_TITLE = "LangGraph OpenAI Serve"


class LanggraphOpenaiServe:
    """Serves the graphs of a ``GraphRegistry`` as OpenAI models.

    ``bind_openai_api()`` mounts the OpenAI sub-application on ``app`` (a new
    FastAPI app when none is given) and wraps the host's lifespan so graph
    factories are resolved, and configuration errors raised, at startup.
    ``checkpoint_scope`` defaults to ``LGOS_CHECKPOINT_SCOPE``: unset, each
    API key's principal is its own scope (``openai/tenancy.py``).

    The host app also gets the operations routes outside the prefix
    (``GET /health/live``, ``GET /health/ready``; ``operations/routes.py``),
    whose readiness follows ``lifecycle``: ``lgos serve`` drains it on
    SIGTERM; an application running its own server may call
    ``lifecycle.drain()`` and ``lifecycle.stop()`` itself.

    ``GET /metrics`` is one of them (``LGOS_METRICS_ENABLED``). Spans go to
    ``tracer_provider`` when given, else where the ``OTEL_*`` variables say
    (``observability/tracing.py``).
    """

    def __init__(
        self,
        graphs: GraphRegistry,
        app: FastAPI | None = None,
        checkpoint_scope: CheckpointScope | None = None,
        *,
        settings: Settings | None = None,
        response_store: ResponseStore | None = None,
        background_backend: BackgroundBackend | None = None,
        tracer_provider: Any = None,
    ) -> None:
        if not isinstance(graphs, GraphRegistry):
            raise TypeError("graphs must be a GraphRegistry")
        self.graph_registry = graphs
        self.settings = settings if settings is not None else Settings()
        self._owns_app = app is None
        self.app = app if app is not None else HostApp(title=_TITLE, version=_version())
        # Secure by default: each API key's principal is its own scope.
        self.checkpoint_scope: CheckpointScope = checkpoint_scope or scope_resolver(
            self.settings.CHECKPOINT_SCOPE
        )
        self._openai_app: FastAPI | None = None
        self.lifecycle = Lifecycle()
        """Starting, serving, draining or stopped: what ``/health/ready`` says."""
        self.webhooks: Webhooks | None = None
        # Background Responses default to this process (memory store, tasks).
        self.response_store = response_store
        self.background_backend = background_backend
        self.tracer_provider = tracer_provider
        # Host integrations can find the registry and the scope resolver
        # without the mounted sub-app.
        self.app.state.graph_registry = graphs
        self.app.state.checkpoint_scope = self.checkpoint_scope

    @property
    def openai_app(self) -> FastAPI:
        """The mounted OpenAI application (after ``bind_openai_api``)."""
        if self._openai_app is None:
            raise RuntimeError("call bind_openai_api() before using openai_app")
        return self._openai_app

    def bind_openai_api(self, prefix: str | None = None) -> LanggraphOpenaiServe:
        """Mount the OpenAI routes at ``prefix`` (``LGOS_OPENAI_API_PREFIX``)."""
        if self._openai_app is not None:
            raise RuntimeError("the OpenAI API is already bound")
        mount_at = (
            normalize_prefix(prefix)
            if prefix is not None
            else self.settings.OPENAI_API_PREFIX
        )
        settings = self.settings
        if settings.ENABLE_LANGFUSE:
            require_langfuse()
        openai_app = FastAPI(title=_TITLE, version=_version(), **settings.docs_kwargs())
        responses = self._response_store()
        background = self._background_runtime(responses)
        batches = batch_runtime(settings, self.graph_registry, background)
        batches.dispatcher = LineDispatcher(openai_app)
        observer = Observer.build(
            metrics=settings.METRICS_ENABLED,
            tracer=build_tracer(self.tracer_provider),
        )
        webhooks = self.webhooks = webhooks_for(settings, background)
        if webhooks is not None:
            batches.announce = webhooks.announce
            if background is not None:
                background.announce = webhooks.announce
        openai_app.state.lgos = ServeState(
            registry=self.graph_registry,
            checkpoint_scope=self.checkpoint_scope,
            ping_interval=settings.SSE_PING_INTERVAL,
            created=int(time.time()),
            body_limits=BodyLimits(settings.MAX_REQUEST_BYTES, settings.MAX_JSON_DEPTH),
            run_timeout=settings.RUN_TIMEOUT,
            callbacks=langfuse_callbacks if settings.ENABLE_LANGFUSE else no_callbacks,
            chat_status_as_reasoning=settings.CHAT_STATUS_AS_REASONING,
            background=background,
            responses=responses,
            conversations=conversation_store(responses),
            conversation_lease=settings.CONVERSATION_LOCK_SECONDS,
            batches=batches,
            lifecycle=self.lifecycle,
            observer=observer,
        )
        routers = (
            model_routes.router,
            chat_routes.router,
            response_routes.router,
            stored_routes.router,
            conversation_routes.router,
            batch_routes.router,
            health.router,
        )
        install_error_handlers(
            openai_app, [route for router in routers for route in router.routes]
        )
        operations_routes.install(
            self.app,
            Readiness(
                self.lifecycle,
                readiness_checks(responses, openai_app.state.lgos.background),
            ),
            MetricsSource(queue_probe(background))
            if settings.METRICS_ENABLED
            else None,
        )
        # Added last = outermost: CORS answers preflights before auth runs.
        openai_app.add_middleware(
            RequestContextMiddleware, api_keys=settings.api_keys(), observer=observer
        )
        if settings.CORS_ORIGINS:
            openai_app.add_middleware(
                CORSMiddleware,
                allow_origins=settings.CORS_ORIGINS,
                allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                allow_headers=["*"],
                expose_headers=["X-Request-ID"],
            )
        for router in routers:
            add_routes(openai_app, router)
        document_bodies(
            openai_app,
            ChatCompletionRequest,
            ResponseCreateRequest,
            *conversation_routes.BODY_MODELS,
            BatchCreateRequest,
            adjust=_allow_store if responses is not None else None,
        )
        mount = Mount(mount_at, app=openai_app, name="openai")
        # Starlette's ``.*`` stops at a newline: ``/v1/models/a%0Ab`` would
        # miss the mount and get the host's plain 404.
        mount.path_regex = re.compile(mount.path_regex.pattern, re.DOTALL)
        self.app.router.routes.append(mount)
        if isinstance(self.app, HostApp):
            self.app.serve_directly(mount)
        if self._owns_app:
            # The host is ours: its 404 and 405 answer with the envelope too.
            install_http_error_handler(self.app)
        self._wrap_lifespan(responses, batches)
        self._openai_app = openai_app
        logger.info(
            "lgos.bound prefix=%s graphs=%d",
            mount_at,
            len(self.graph_registry.registry),
        )
        return self

    def _response_store(self) -> ResponseStore | None:
        """The store that keeps Responses: ``None`` unless
        ``LGOS_RESPONSE_STORE`` is set; a ``response_store`` passed in code
        is the one used then."""
        if self.settings.RESPONSE_STORE is None:
            return None
        return self.response_store or response_store(self.settings)

    def _background_runtime(
        self, responses: ResponseStore | None
    ) -> BackgroundRuntime | None:
        # The PostgreSQL queue also carries batches: a deployment that names
        # it gets it whether or not a graph runs in the background.
        wanted = self.settings.BACKGROUND_BACKEND == "postgres" or any(
            config.supports(GraphFeature.BACKGROUND)
            for config in self.graph_registry.registry.values()
        )
        if not wanted and self.background_backend is None:
            return None
        store = responses or self.response_store
        if self.background_backend is not None:
            return BackgroundRuntime(
                store=store or InMemoryResponseStore(),
                backend=self.background_backend,
                max_attempts=self.settings.BACKGROUND_MAX_ATTEMPTS,
            )
        settings = self.settings
        if settings.BACKGROUND_BACKEND == "postgres":
            return postgres_background(settings, responses)
        return BackgroundRuntime(
            store=store or InMemoryResponseStore(),
            backend=InProcessBackend(settings.BACKGROUND_CONCURRENCY),
            max_attempts=settings.BACKGROUND_MAX_ATTEMPTS,
        )

    def _wrap_lifespan(
        self, responses: ResponseStore | None, batches: BatchRuntime
    ) -> None:
        host_lifespan = self.app.router.lifespan_context
        registry = self.graph_registry
        retention = self.settings.RESPONSE_RETENTION
        lifecycle = self.lifecycle

        @asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[Any]:
            await registry.resolve_all()
            lifecycle.start()
            sweepers = []
            if responses is not None:
                sweepers.append(
                    asyncio.create_task(sweep_forever(responses, retention))
                )
            if batches.files is not None:  # batches can exist
                sweepers.append(asyncio.create_task(expire_forever(batches)))
            try:
                context: AbstractAsyncContextManager[Any] = host_lifespan(app)
                async with context as state:
                    yield state
            finally:
                lifecycle.stop()
                await self.close()
                for sweeper in sweepers:
                    sweeper.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await sweeper

        self.app.router.lifespan_context = lifespan

    async def close(self) -> None:
        """Let go of what batches and webhooks hold (HTTP clients, tasks of
        this process); the app's lifespan does it on shutdown."""
        if self._openai_app is None:
            return
        batches = self._openai_app.state.lgos.batches
        if batches is not None:
            await batches.queue.stop()
            if batches.files is not None:
                await batches.files.close()
        if self.webhooks is not None:
            await self.webhooks.sender.stop()


def queue_probe(runtime: BackgroundRuntime | None) -> QueueProbe | None:
    """What reads the background queue at scrape time, if there is one."""
    if runtime is None:
        return None
    probe: QueueProbe | None = getattr(runtime.backend, "queue_stats", None)
    return probe


def _allow_store(schema: dict[str, Any]) -> None:
    """A server that keeps Responses accepts ``store: true``."""
    schema["ResponseCreateRequest"]["properties"]["store"].pop("enum", None)


def _version() -> str:
    return version("langgraph-openai-serve")
