"""The contract of run coordinators: single-flight leases for interrupt runs.

``RunCoordinator`` is the protocol; ``InMemoryRunCoordinator`` serves one
process. The cross-process coordinator on PostgreSQL advisory locks lives in
``langgraph_openai_serve.integrations.postgres`` (it needs the ``postgres``
extra).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol, runtime_checkable

from langgraph_openai_serve.graph.errors import RunBusyError


@runtime_checkable
class RunCoordinator(Protocol):
    """Grants at most one holder per checkpoint key, across every worker.

    ``lease(key)`` fails at once (it never queues) when the key is held.
    """

    def lease(self, key: str) -> AbstractAsyncContextManager[None]:
        """Hold the key for the duration of the ``async with`` block."""
        ...


class InMemoryRunCoordinator:
    """Leases held in one process's memory: for tests and a single worker.

    It cannot serialize requests across worker processes or hosts; use
    ``PostgresRunCoordinator`` there. Use it from one event loop: the check
    and the claim of a key happen without yielding, so they are atomic there.
    """

    def __init__(self) -> None:
        self._held: set[str] = set()

    def lease(self, key: str) -> AbstractAsyncContextManager[None]:
        """Hold ``key`` for the ``async with`` block.

        Raises:
            RunBusyError: on entry, when the key is already held.
        """
        return self._lease(key)

    @asynccontextmanager
    async def _lease(self, key: str) -> AsyncIterator[None]:
        if key in self._held:
            raise RunBusyError(key)
        self._held.add(key)
        try:
            yield
        finally:
            self._held.discard(key)
