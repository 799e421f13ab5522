"""Fair share: which waiting job a free slot takes, on every backend.

A fleet's slots are shared by its tenants. When a slot frees, the waiting
jobs (due, their lock free) are ranked by

1. **class**: the job's ``Priority``, raised one class (``AGING_STEP``) for
   every ``aging`` seconds it has waited, up to the top class. A background
   Response goes before a batch's lines, and a line that waited long enough
   goes before fresh interactive work: bulk work cannot starve forever.
2. **share**: its tenant's running jobs divided by the tenant's weight
   (1 unless configured), fewest first. Whatever order tenants queued in, the
   one using least of the fleet gets the slot; a tenant alone gets every slot.
3. **arrival**: the order queued, among equals.

A long job of a low class offers its slot back between its pieces
(``JobQueue.outranked``) when a waiting job would win over it were it queued
again now, its tenant holding one slot fewer: a waiting job of a higher
class, or of its class from a tenant with a strictly smaller share (so two
tenants one slot apart do not trade a slot back and forth).

The in-process queue ranks in Python (``backends/memory/slots.py``),
PostgreSQL's in the fetch statement (``backends/postgres/fair_fetch.py``);
``tests/test_job_queue.py`` holds both to the same order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from langgraph_openai_serve.jobs.protocol import Priority

AGING_STEP = 10
"""What a job's class rises by for each ``aging`` period waited: one of the
``Priority`` classes."""
TOP_CLASS = int(max(Priority))


@dataclass(frozen=True, slots=True)
class FairShare:
    """The ranking's settings: tenants' weights and the aging period."""

    weights: Mapping[str, float] = field(default_factory=dict)
    """A tenant's weight by scope (others weigh 1): a tenant of weight 2
    gets twice the slots of one of weight 1 when both wait."""
    aging: float | None = 30.0
    """Seconds a waiting job takes to rise one class (``None``: never)."""

    def weight(self, tenant: str) -> float:
        return self.weights.get(tenant, 1.0)

    def share(self, tenant: str, running: int) -> float:
        """``tenant``'s use of the slots when it runs ``running`` jobs."""
        return running / self.weight(tenant)

    def effective(self, priority: int, waited: float) -> int:
        """The class of a job of ``priority`` that waited ``waited`` seconds."""
        if self.aging is None or priority >= TOP_CLASS:
            return priority
        risen = priority + AGING_STEP * math.floor(max(waited, 0.0) / self.aging)
        return min(TOP_CLASS, risen)
