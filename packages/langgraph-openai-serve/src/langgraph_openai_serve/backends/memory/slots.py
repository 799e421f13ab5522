"""``FairSlots``: at most N holders; a freed slot goes to the waiter the
fair share ranks first (``jobs/fairness.py``).

``asyncio.Semaphore`` wakes its waiters in arrival order; the in-process
queue needs the order the durable one has: the most urgent class first
(raised as a waiter ages), then the tenant holding fewest slots for its
weight, then arrival. A queue holds few waiters, so a release looks at each.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from langgraph_openai_serve.jobs.fairness import FairShare


@dataclass(eq=False, slots=True)
class _Waiter:
    priority: int
    tenant: str
    since: float
    arrival: int
    future: asyncio.Future[None] = field(repr=False)


class FairSlots:
    """``size`` slots shared by tenants the way ``fair`` says."""

    def __init__(self, size: int, fair: FairShare | None = None) -> None:
        self._free = size
        self._fair = fair or FairShare()
        self._waiters: list[_Waiter] = []
        self._holding: dict[str, int] = {}
        self._arrivals = itertools.count()

    @contextlib.asynccontextmanager
    async def held(
        self, priority: int, tenant: str | None, since: float
    ) -> AsyncIterator[None]:
        """A slot for the block, for a job of ``priority`` and ``tenant``
        waiting since ``since`` (``time.monotonic()``)."""
        owner = tenant or ""
        await self._acquire(priority, owner, since)
        try:
            yield
        finally:
            self._release(owner)

    def holding(self, tenant: str | None) -> int:
        """Slots ``tenant``'s jobs hold now."""
        return self._holding.get(tenant or "", 0)

    async def _acquire(self, priority: int, tenant: str, since: float) -> None:
        if self._free > 0 and not self._live():
            self._take(tenant)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiter = _Waiter(priority, tenant, since, next(self._arrivals), future)
        self._waiters.append(waiter)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release(tenant)  # handed a slot as it was cancelled: pass it on
            raise

    def _live(self) -> list[_Waiter]:
        self._waiters = [w for w in self._waiters if not w.future.done()]
        return self._waiters

    def _share(self, waiter: _Waiter) -> float:
        return self._fair.share(waiter.tenant, self._holding.get(waiter.tenant, 0))

    def _take(self, tenant: str) -> None:
        self._free -= 1
        self._holding[tenant] = self._holding.get(tenant, 0) + 1

    def _release(self, tenant: str) -> None:
        left = self._holding[tenant] - 1
        if left:
            self._holding[tenant] = left
        else:
            del self._holding[tenant]
        self._free += 1
        waiters = self._live()
        if not waiters:
            return
        now = time.monotonic()
        chosen = min(
            waiters,
            key=lambda w: (
                -self._fair.effective(w.priority, now - w.since),
                self._share(w),
                w.arrival,
            ),
        )
        self._waiters.remove(chosen)
        self._take(chosen.tenant)
        chosen.future.set_result(None)
