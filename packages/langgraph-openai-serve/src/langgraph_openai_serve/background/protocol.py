"""The contracts of background runs: the response store and the backend.

A background Response lives in a ``ResponseStore``: its current snapshot (the
OpenAI Response object), the ordered stream events its run produced (so any
API process can replay them from a sequence number), a cancel flag and its
idempotency key. A ``BackgroundBackend`` takes submitted jobs and runs each
once with the executor it was started with; it never retries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class BackgroundJob:
    """What a worker needs to run one background Response."""

    response_id: str
    scope: str
    body: dict[str, Any]
    """The validated request body, as JSON; the worker decodes it again."""
    run_id: str | None = None
    """The interrupt run (UUID hex) an interrupt graph's job drives."""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    sequence: int
    frame: bytes
    """The SSE frame exactly as a foreground stream would send it."""


Executor = Callable[[BackgroundJob], Coroutine[Any, Any, None]]


class ResponseStore(Protocol):
    """Durable state of background Responses, shared by API and workers."""

    async def create(
        self,
        job: BackgroundJob,
        snapshot: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        body_digest: str | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Store a queued Response; with a known key, return the original.

        Returns the stored snapshot and whether it was created now.

        Raises:
            IdempotencyKeyReusedError: the key was used with another body.
        """
        ...

    async def get(self, response_id: str, scope: str) -> dict[str, Any] | None:
        """The snapshot, or ``None`` when unknown or in another scope."""
        ...

    async def job(self, response_id: str) -> BackgroundJob | None: ...

    async def set_snapshot(self, response_id: str, snapshot: dict[str, Any]) -> None:
        """Replace the snapshot (status changes, the terminal object)."""
        ...

    async def append_events(self, response_id: str, frames: list[bytes]) -> None:
        """Append events in order; each gets the next sequence number."""
        ...

    def events(self, response_id: str, after: int) -> AsyncIterator[StoredEvent]:
        """Events with a sequence number above ``after``, following new ones
        until the Response is terminal."""
        ...

    async def request_cancel(self, response_id: str) -> bool:
        """Flag the Response for cancellation; ``False`` if already terminal."""
        ...

    async def cancel_requested(self, response_id: str) -> bool: ...


class BackgroundBackend(Protocol):
    """Runs submitted jobs once each, with the executor given to ``start``."""

    async def start(self, executor: Executor) -> None: ...

    async def stop(self) -> None: ...

    async def submit(self, job: BackgroundJob) -> None: ...

    async def cancel(self, response_id: str) -> None:
        """Stop the job if it is running here (the store flag covers the rest)."""
        ...
