"""``BatchRuntime``: what the Batch API's routes and steps share."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from langgraph_openai_serve.batches.dispatch import LineDispatcher
from langgraph_openai_serve.batches.files import FilesClient
from langgraph_openai_serve.batches.input import Limits
from langgraph_openai_serve.batches.protocol import BatchQueue, BatchStep, BatchStore
from langgraph_openai_serve.webhooks.protocol import Announce, announce_nothing


@dataclass(slots=True)
class BatchRuntime:
    store: BatchStore
    queue: BatchQueue
    files: FilesClient | None
    """``None``: the deployment set no Files API (``LGOS_BATCH_FILES_URL``)."""
    known_model: Callable[[str], bool]
    concurrency: int = 4
    """Chunks of one batch queued or running at once."""
    lines_per_job: int = 25
    window_seconds: float = 24 * 3600.0
    limits: Limits = field(default_factory=Limits)
    poll_interval: float = 0.5
    """Seconds between a running line's checks for a cancel or the expiry."""
    expiry_check_interval: float = 30.0
    """Seconds between two sweeps for open batches past their window."""
    announce: Announce = announce_nothing
    dispatcher: LineDispatcher | None = None
    """Set when the OpenAI app is bound."""
    started: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def ensure_started(
        self, handler: Callable[[BatchStep], Awaitable[None]]
    ) -> None:
        if self.started:
            return
        async with self.lock:
            if not self.started:
                await self.queue.start(handler)
                self.started = True
