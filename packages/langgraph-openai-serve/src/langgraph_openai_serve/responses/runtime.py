"""``BackgroundRuntime``: what background Responses need from the deployment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.jobs.protocol import JobQueue
from langgraph_openai_serve.responses.protocol import ResponseStore
from langgraph_openai_serve.webhooks.protocol import Announce, announce_nothing


@dataclass(frozen=True, slots=True)
class BackgroundRuntime:
    """The store that keeps background Responses and the queue that runs
    them, built once with the deployment's services."""

    store: ResponseStore
    jobs: JobQueue
    max_attempts: int = 3
    """Runs of one job that may be lost with their workers before its
    Response fails."""
    checkpointer: Callable[[], BaseCheckpointSaver[Any] | None] = lambda: None
    """The backend's checkpointer for durable runs of graphs without their
    own (PostgreSQL's, built on first use inside the event loop); ``None``:
    background runs are not durable."""
    announce: Announce = announce_nothing
    """Queues the ``response.*`` event of a Response that ended (webhooks)."""
    cancel_poll_interval: float = 0.25
    """Seconds between a running job's looks at its cancel flag."""
