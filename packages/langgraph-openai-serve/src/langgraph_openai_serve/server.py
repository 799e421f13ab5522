"""``LanggraphOpenaiServe``: mounts the OpenAI API for a graph registry."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import warnings
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import cached_property
from typing import Any

from fastapi import FastAPI
from starlette.routing import Mount

from langgraph_openai_serve.backends.memory import MemoryBackend
from langgraph_openai_serve.backends.memory.responses import InMemoryResponseStore
from langgraph_openai_serve.backends.protocol import Backend
from langgraph_openai_serve.batches.expiry import expire_forever
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.host import HostApp
from langgraph_openai_serve.jobs.protocol import JobQueue
from langgraph_openai_serve.openai.app import install_openai
from langgraph_openai_serve.openai.errors import install_http_error_handler
from langgraph_openai_serve.openai.state import CheckpointScope
from langgraph_openai_serve.openai.tenancy import scope_resolver
from langgraph_openai_serve.operations import routes as operations_routes
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.responses.retention import sweep_forever
from langgraph_openai_serve.services import (
    TITLE,
    Services,
    build_services,
    library_version,
)
from langgraph_openai_serve.settings import Settings, normalize_prefix
from langgraph_openai_serve.webhooks.service import Webhooks

__all__ = ["LanggraphOpenaiServe"]

logger = logging.getLogger("langgraph_openai_serve")


class LanggraphOpenaiServe:
    """Serves the graphs of a ``GraphRegistry`` as OpenAI models.

    ``bind_openai_api()`` mounts the OpenAI sub-application on ``app`` (a new
    FastAPI app when none is given) and wraps the host's lifespan so graph
    factories are resolved, and configuration errors raised, at startup.
    ``checkpoint_scope`` defaults to ``LGOS_CHECKPOINT_SCOPE``: unset, each
    API key's principal is its own scope (``openai/tenancy.py``).

    ``backend`` keeps what the deployment keeps (``langgraph_openai_serve.
    backends``); by default the one the settings choose. ``response_store``
    and ``background_backend`` are deprecated: a memory backend with that
    store (an ``InMemoryResponseStore``) or that job queue.

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
        backend: Backend | None = None,
        response_store: InMemoryResponseStore | None = None,
        background_backend: JobQueue | None = None,
        tracer_provider: Any = None,
    ) -> None:
        if not isinstance(graphs, GraphRegistry):
            raise TypeError("graphs must be a GraphRegistry")
        self.graph_registry = graphs
        self.settings = settings if settings is not None else Settings()
        self._owns_app = app is None
        self.app = app if app is not None else _host_app()
        # Secure by default: each API key's principal is its own scope.
        self.checkpoint_scope: CheckpointScope = checkpoint_scope or scope_resolver(
            self.settings.CHECKPOINT_SCOPE
        )
        self._openai_app: FastAPI | None = None
        self.lifecycle = Lifecycle()
        """Starting, serving, draining or stopped: what ``/health/ready`` says."""
        self._backend = _memory_overrides(backend, response_store, background_backend)
        self._background = background_backend is not None
        self.tracer_provider = tracer_provider
        # Host integrations can find the registry and the scope resolver
        # without the mounted sub-app.
        self.app.state.graph_registry = graphs
        self.app.state.checkpoint_scope = self.checkpoint_scope

    @cached_property
    def services(self) -> Services:
        """Everything the server runs on, built once (on first use: binding
        builds them)."""
        return build_services(
            self.settings,
            self.graph_registry,
            self.checkpoint_scope,
            lifecycle=self.lifecycle,
            backend=self._backend,
            background=self._background,
            tracer_provider=self.tracer_provider,
        )

    @property
    def webhooks(self) -> Webhooks | None:
        return self.services.webhooks

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
        settings = self.settings
        mount_at = (
            normalize_prefix(prefix)
            if prefix is not None
            else settings.OPENAI_API_PREFIX
        )
        services = self.services
        install_openai(
            services.openai_app,
            api_keys=settings.api_keys(),
            observer=services.observer,
            cors_origins=settings.CORS_ORIGINS,
            keeps_responses=services.state.responses is not None,
        )
        operations_routes.install(self.app, services.readiness, services.metrics)
        mount = Mount(mount_at, app=services.openai_app, name="openai")
        # Starlette's ``.*`` stops at a newline: ``/v1/models/a%0Ab`` would
        # miss the mount and get the host's plain 404.
        mount.path_regex = re.compile(mount.path_regex.pattern, re.DOTALL)
        self.app.router.routes.append(mount)
        if isinstance(self.app, HostApp):
            self.app.serve_directly(mount)
        if self._owns_app:
            # The host is ours: its 404 and 405 answer with the envelope too.
            install_http_error_handler(self.app)
        self.app.router.lifespan_context = _lifespan(
            self.app.router.lifespan_context, services
        )
        self._openai_app = services.openai_app
        logger.info(
            "lgos.bound prefix=%s graphs=%d",
            mount_at,
            len(self.graph_registry.registry),
        )
        return self

    async def close(self) -> None:
        """Stop this process's jobs and let go of what batches and webhooks
        hold (HTTP clients); the app's lifespan does it on shutdown."""
        if self._openai_app is not None:
            await self.services.close()


def _host_app() -> HostApp:
    """The host LGOS builds when given none, without FastAPI's ``/docs``,
    ``/redoc`` and ``/openapi.json``: its document would list none of the
    OpenAI routes (a mount is not in it), only the library's name and
    version, an answer to anyone fingerprinting the server. The OpenAI API's
    own docs are ``{prefix}/docs`` (``LGOS_OPENAI_API_DOCS_ENABLED``), behind
    the API keys like every route of the prefix but ``/health``."""
    return HostApp(
        title=TITLE,
        version=library_version(),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )


def _memory_overrides(
    backend: Backend | None,
    responses: InMemoryResponseStore | None,
    jobs: JobQueue | None,
) -> Backend | None:
    """The backend the deprecated ``response_store`` and
    ``background_backend`` arguments describe."""
    if responses is None and jobs is None:
        return backend
    warnings.warn(
        "response_store= and background_backend= are deprecated: pass "
        "backend=MemoryBackend(responses=..., jobs=...) instead",
        DeprecationWarning,
        stacklevel=3,
    )
    if backend is not None:
        raise TypeError("pass either backend= or response_store=/background_backend=")
    return MemoryBackend(responses=responses, jobs=jobs)


def _lifespan(host_lifespan: Any, services: Services) -> Any:
    """The host's lifespan inside LGOS's: graphs resolved and the process
    serving before the host starts; the sweepers of kept Responses and
    expired batches while it runs; this process's jobs stopped after."""
    settings = services.settings
    state = services.state

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        await state.registry.resolve_all()
        services.lifecycle.start()
        sweepers = []
        if state.responses is not None:
            sweepers.append(
                asyncio.create_task(
                    sweep_forever(state.responses, settings.RESPONSE_RETENTION)
                )
            )
        if state.batches is not None and state.batches.files is not None:
            sweepers.append(asyncio.create_task(expire_forever(state.batches)))
        try:
            context: AbstractAsyncContextManager[Any] = host_lifespan(app)
            async with context as host_state:
                yield host_state
        finally:
            services.lifecycle.stop()
            await services.close()
            for sweeper in sweepers:
                sweeper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweeper

    return lifespan
