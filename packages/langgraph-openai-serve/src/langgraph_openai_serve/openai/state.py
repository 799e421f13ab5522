"""What every OpenAI route needs from the server, set once at binding."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request

from langgraph_openai_serve.graph.registry import GraphRegistry

CheckpointScope = Callable[[Request], str | Awaitable[str]]


@dataclass(frozen=True, slots=True)
class ServeState:
    registry: GraphRegistry
    checkpoint_scope: CheckpointScope
    ping_interval: float
    created: int
    """Unix time reported as every model's ``created``."""


def serve_state(request: Request) -> ServeState:
    """The state of the OpenAI app serving ``request``."""
    state: ServeState = request.app.state.lgos
    return state
