"""What every OpenAI route needs from the server, built once with the
deployment's services (``services.py``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from fastapi import Request
from langchain_core.callbacks import BaseCallbackHandler

from langgraph_openai_serve.batches.runtime import BatchRuntime
from langgraph_openai_serve.conversations.protocol import ConversationStore
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.observability.observer import NO_OBSERVER, Observer
from langgraph_openai_serve.openai.auth import internal_scope
from langgraph_openai_serve.openai.request_body import BodyLimits
from langgraph_openai_serve.operations.admission import Admitted, RunGate, RunLimits
from langgraph_openai_serve.operations.lifecycle import Lifecycle
from langgraph_openai_serve.responses.protocol import ResponseStore
from langgraph_openai_serve.responses.runtime import BackgroundRuntime

CheckpointScope = Callable[[Request], str | Awaitable[str]]
RunCallbacks = Callable[[], tuple[BaseCallbackHandler, ...]]


def no_callbacks() -> tuple[BaseCallbackHandler, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class ServeState:
    """Everything the OpenAI routes read from the server, built once when
    ``LanggraphOpenaiServe.bind_openai_api`` binds the app (as
    ``app.state.lgos``; ``serve_state(request)`` returns it): the graphs, how
    to scope checkpoints, SSE and model-list settings, the server-wide run
    callbacks and the background runtime. Nothing in it changes per request.
    """

    registry: GraphRegistry
    checkpoint_scope: CheckpointScope
    ping_interval: float
    created: int
    """Unix time reported as every model's ``created``."""
    body_limits: BodyLimits
    run_timeout: float | None = None
    """Seconds a foreground run may take before it is cancelled."""
    callbacks: RunCallbacks = no_callbacks
    """Server-wide callbacks for one graph run (``server.py`` passes Langfuse's
    when tracing is on; they are built on the first run)."""
    chat_status_as_reasoning: bool = False
    responses_status_as_reasoning: bool = False
    """The deployment's choice for Responses statuses (``statuses.py``)."""
    background: BackgroundRuntime | None = None
    """Set when some graph declares ``GraphFeature.BACKGROUND``."""
    responses: ResponseStore | None = None
    """The store that keeps Responses (``LGOS_RESPONSE_STORE``); ``None``:
    stateless. The background runtime's store is this same one when set."""
    conversations: ConversationStore | None = None
    """Kept Conversations: set exactly when ``responses`` is."""
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    """The process's lifecycle: followers of background runs end when it
    stops, so their clients re-attach on another process."""
    conversation_lease: float = 30.0
    """Seconds a turn's claim on its Conversation outlives the last renewal
    by the process running it (``LGOS_CONVERSATION_LOCK_SECONDS``)."""
    batches: BatchRuntime | None = None
    """The Batch API's store, queue and Files API client."""
    observer: Observer = NO_OBSERVER
    """What runs record: metrics, spans (``observability/``)."""
    gate: RunGate = field(default_factory=lambda: RunGate(RunLimits()))
    """Admits this process's foreground runs (``operations/admission.py``)."""

    async def admit(
        self, request: Request, scope: str | None = None
    ) -> Admitted | None:
        """Admit one foreground run of ``request``'s tenant (``scope``, when
        the caller resolved it already); ``None`` for a batch line (its
        worker's slots bound it already).

        Raises:
            LimitReached: the process or the tenant is at its limit.
        """
        if internal_scope(request) is not None:
            return None
        return self.gate.admit(scope or await self.scope_for(request))

    def follow(self, request: Request, stream: bool | None = True) -> Admitted | None:
        """Admit one stream following a background Response (``None`` when
        the request streams nothing, or is a batch line).

        Raises:
            LimitReached: the process holds its most such streams.
        """
        if not stream or internal_scope(request) is not None:
            return None
        return self.gate.follow()

    async def scope_for(self, request: Request) -> str:
        """The server-trusted checkpoint scope of ``request``: the one an
        in-process caller (a batch line) runs it in, else the resolver's."""
        return internal_scope(request) or await resolve_scope(
            self.checkpoint_scope, request
        )


async def resolve_scope(resolver: CheckpointScope, request: Request) -> str:
    """What ``resolver`` (sync or async) returns for ``request``.

    Raises:
        GraphConfigurationError: it returned anything but a non-empty string.
    """
    scope = resolver(request)
    if inspect.isawaitable(scope):
        scope = await scope
    if not isinstance(scope, str) or not scope:
        raise GraphConfigurationError(
            "checkpoint_scope must return a non-empty string."
        )
    return scope


def serve_state(request: Request) -> ServeState:
    """The state of the OpenAI app serving ``request``."""
    state: ServeState = request.app.state.lgos
    return state
