"""What every OpenAI route needs from the server, set once at binding."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request
from langchain_core.callbacks import BaseCallbackHandler

from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.integrations.langfuse import get_langfuse_callback

CheckpointScope = Callable[[Request], str | Awaitable[str]]


@dataclass(frozen=True, slots=True)
class ServeState:
    registry: GraphRegistry
    checkpoint_scope: CheckpointScope
    ping_interval: float
    created: int
    """Unix time reported as every model's ``created``."""
    langfuse: bool = False
    chat_status_as_reasoning: bool = False

    def callbacks(self) -> tuple[BaseCallbackHandler, ...]:
        """Server-wide callbacks for one graph run."""
        if not self.langfuse:
            return ()
        return (get_langfuse_callback(),)


def serve_state(request: Request) -> ServeState:
    """The state of the OpenAI app serving ``request``."""
    state: ServeState = request.app.state.lgos
    return state
