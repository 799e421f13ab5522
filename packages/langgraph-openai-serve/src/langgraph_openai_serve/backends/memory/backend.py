"""``MemoryBackend``: a deployment that keeps everything in this process.

The default: right for tests and one development server. Jobs run as tasks
of this process as soon as they are queued; a restart forgets every
Response, Conversation and batch, and background runs are not durable.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.backends.memory.batches import InMemoryBatchStore
from langgraph_openai_serve.backends.memory.conversations import (
    InMemoryConversationStore,
)
from langgraph_openai_serve.backends.memory.jobs import InProcessQueue
from langgraph_openai_serve.backends.memory.responses import InMemoryResponseStore
from langgraph_openai_serve.graph.coordination import (
    InMemoryRunCoordinator,
    RunCoordinator,
)
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import JobQueue
from langgraph_openai_serve.operations.readiness import Check


class MemoryBackend:
    """Every store in a dict, every job an asyncio task.

    ``concurrency``: jobs running at once, shared between tenants as
    ``fair`` says; ``responses`` and ``jobs``: a store or queue of one's own
    in place of the default ones.
    """

    def __init__(
        self,
        *,
        concurrency: int = 8,
        responses: InMemoryResponseStore | None = None,
        jobs: JobQueue | None = None,
        fair: FairShare | None = None,
    ) -> None:
        self.responses = responses or InMemoryResponseStore()
        # A background Response holds its Conversation until it ends.
        self.conversations = InMemoryConversationStore(
            unfinished=self.responses.unfinished
        )
        self.batches = InMemoryBatchStore()
        self.jobs: JobQueue = jobs or InProcessQueue(concurrency, fair)

    def checkpointer(self) -> BaseCheckpointSaver[Any] | None:
        return None

    def run_coordinator(self, *, max_concurrent_leases: int = 4) -> RunCoordinator:
        return InMemoryRunCoordinator()

    def checks(self) -> dict[str, Check]:
        return self.jobs.checks()

    async def setup(self) -> None:
        """Nothing to create."""

    async def close(self) -> None:
        await self.jobs.close()
