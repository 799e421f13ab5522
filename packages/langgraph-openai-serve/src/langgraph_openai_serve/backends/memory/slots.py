"""``FairSlots``: at most N holders (and the reserved slots of the top
class); a freed slot goes to the waiter the fair share ranks first
(``jobs/fairness.py``).

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

from langgraph_openai_serve.jobs.fairness import TOP_CLASS, FairShare


@dataclass(eq=False, slots=True)
class _Waiter:
    priority: int
    tenant: str
    since: float
    arrival: int
    future: asyncio.Future[bool] = field(repr=False)
    """Set to whether the slot given counts against the concurrency (its job
    is below the top class) or is a reserved one's."""


class FairSlots:
    """``size`` slots shared by tenants the way ``fair`` says, and
    ``fair.reserved`` more that only jobs of the top class take."""

    def __init__(self, size: int, fair: FairShare | None = None) -> None:
        self._fair = fair or FairShare()
        self._size = size
        self._slots = size + self._fair.reserved
        self._held = 0
        self._below_top = 0
        """Slots held by jobs below the top class (at most ``size``)."""
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
        below_top = await self._acquire(priority, owner, since)
        try:
            yield
        finally:
            self._release(owner, below_top)

    def holding(self, tenant: str | None) -> int:
        """Slots ``tenant``'s jobs hold now."""
        return self._holding.get(tenant or "", 0)

    async def _acquire(self, priority: int, tenant: str, since: float) -> bool:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(
            _Waiter(priority, tenant, since, next(self._arrivals), future)
        )
        self._dispatch()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # Given a slot as it was cancelled: pass it on.
                self._release(tenant, future.result())
            raise

    def _dispatch(self) -> None:
        """Give free slots to the waiters ranked first that may take one."""
        while self._held < self._slots:
            now = time.monotonic()
            eligible = [
                (self._fair.effective(w.priority, now - w.since), w)
                for w in self._waiters
                if not w.future.done()
            ]
            if self._below_top >= self._size:  # only reserved slots are free
                eligible = [(e, w) for e, w in eligible if e >= TOP_CLASS]
            if not eligible:
                break
            effective, chosen = min(
                eligible,
                key=lambda ew: (-ew[0], self._share(ew[1]), ew[1].arrival),
            )
            self._waiters.remove(chosen)
            below_top = effective < TOP_CLASS
            self._held += 1
            self._below_top += below_top
            self._holding[chosen.tenant] = self._holding.get(chosen.tenant, 0) + 1
            chosen.future.set_result(below_top)
        self._waiters = [w for w in self._waiters if not w.future.done()]

    def _share(self, waiter: _Waiter) -> float:
        return self._fair.share(waiter.tenant, self._holding.get(waiter.tenant, 0))

    def _release(self, tenant: str, below_top: bool) -> None:
        left = self._holding[tenant] - 1
        if left:
            self._holding[tenant] = left
        else:
            del self._holding[tenant]
        self._held -= 1
        self._below_top -= below_top
        self._dispatch()
