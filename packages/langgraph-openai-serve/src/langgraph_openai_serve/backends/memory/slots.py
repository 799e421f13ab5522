"""``PrioritySlots``: at most N holders, the most urgent waiter served first.

``asyncio.Semaphore`` wakes its waiters in arrival order; the in-process
queue needs the order the durable one has (procrastinate takes the waiting
job of highest priority first), so a background Response deferred behind a
batch's lines is the next to run.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections.abc import AsyncIterator


class PrioritySlots:
    """``size`` slots; a freed slot goes to the waiter of highest priority,
    the earliest of them on a tie."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    @contextlib.asynccontextmanager
    async def held(self, priority: int) -> AsyncIterator[None]:
        await self._acquire(priority)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, priority: int) -> None:
        if self._free > 0 and not self._live_waiters():
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (-priority, next(self._arrivals), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # handed a slot as it was cancelled: pass it on
            raise

    def _live_waiters(self) -> bool:
        while self._waiters and self._waiters[0][2].done():
            heapq.heappop(self._waiters)  # cancelled while waiting
        return bool(self._waiters)

    def _release(self) -> None:
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
                return
        self._free += 1
