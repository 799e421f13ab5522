"""``Backend``: a deployment's persistence, behind one seam.

A backend holds every store a deployment keeps and the queue its jobs run
on, and knows how to set them up, check them and let them go:

- ``responses``: kept and background Responses (``responses/protocol.py``);
- ``conversations``: Conversations (``conversations/protocol.py``);
- ``batches``: batches and their lines (``batches/protocol.py``);
- ``jobs``: the job queue (``jobs/protocol.py``): background runs, batch
  steps and webhook deliveries are tasks on it, so the webhook sender is
  the same code on every backend (``webhooks/sender.py``);
- ``checkpointer()`` for durable background runs and ``run_coordinator()``
  for interrupt leases across its processes;
- ``checks()`` (what ``/health/ready`` asks of it), ``setup()`` (``lgos
  db-setup``) and ``close()``.

Two implement it: ``memory.MemoryBackend`` (this process) and
``postgres.PostgresBackend`` (one PostgreSQL for a fleet of API and worker
processes). The settings choose one once (``backend_for``); nothing else
asks which it is. Each contract has one conformance suite in the tests, run
over both: a third backend passes by running them.
"""

from __future__ import annotations

from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.batches.protocol import BatchStore
from langgraph_openai_serve.conversations.protocol import ConversationStore
from langgraph_openai_serve.graph.coordination import RunCoordinator
from langgraph_openai_serve.jobs.protocol import JobQueue
from langgraph_openai_serve.operations.readiness import Check
from langgraph_openai_serve.responses.protocol import ResponseStore


class Backend(Protocol):
    @property
    def responses(self) -> ResponseStore: ...

    @property
    def conversations(self) -> ConversationStore: ...

    @property
    def batches(self) -> BatchStore: ...

    @property
    def jobs(self) -> JobQueue: ...

    def checkpointer(self) -> BaseCheckpointSaver[Any] | None:
        """The saver of durable background runs (built on first use, inside
        the event loop); ``None``: a re-run starts over."""
        ...

    def run_coordinator(self, *, max_concurrent_leases: int = 4) -> RunCoordinator:
        """Leases for interrupt runs that hold across this backend's processes."""
        ...

    def checks(self) -> dict[str, Check]:
        """What ``/health/ready`` checks of the backend, by name."""
        ...

    async def setup(self) -> None:
        """Create or migrate what the backend keeps (``lgos db-setup``)."""
        ...

    async def close(self) -> None:
        """Stop the jobs running here and let go of connections."""
        ...
