"""The contract of run coordinators: single-flight leases for interrupt runs."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable


@runtime_checkable
class RunCoordinator(Protocol):
    """Grants at most one holder per checkpoint key, across every worker.

    ``lease(key)`` fails at once (it never queues) when the key is held.
    """

    def lease(self, key: str) -> AbstractAsyncContextManager[None]:
        """Hold the key for the duration of the ``async with`` block."""
        ...
