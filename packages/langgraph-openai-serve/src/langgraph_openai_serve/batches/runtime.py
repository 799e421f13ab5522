"""``BatchRuntime``: what the Batch API's routes and steps share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.batches.dispatch import LineDispatcher
from langgraph_openai_serve.batches.files import FilesClient
from langgraph_openai_serve.batches.input import Limits
from langgraph_openai_serve.batches.jobs import defer_steps
from langgraph_openai_serve.batches.protocol import BatchStep, BatchStore
from langgraph_openai_serve.jobs.protocol import JobQueue
from langgraph_openai_serve.webhooks.protocol import Announce, announce_nothing


@dataclass(frozen=True, slots=True)
class BatchRuntime:
    store: BatchStore
    jobs: JobQueue
    """The deployment's queue: the steps are jobs of ``jobs.TASK_NAME``."""
    files: FilesClient | None
    """``None``: the deployment set no Files API (``LGOS_BATCH_FILES_URL``)."""
    dispatcher: LineDispatcher
    """Runs a line through the OpenAI app."""
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

    async def defer(
        self,
        steps: Sequence[BatchStep],
        scope: str | None,
        transaction: Any = None,
    ) -> None:
        """Queue ``steps`` of a batch of ``scope`` (its tenant, whose share of
        the workers they count in) inside the store's ``transaction`` when
        given."""
        await defer_steps(self.jobs, steps, scope, transaction)
