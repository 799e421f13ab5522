"""When the supervisor starts a crashed service again, and when it gives up.

A service that exits on its own (a crash, a stray SIGTERM, the OOM killer)
is started again after a back-off that doubles with each crash still inside
the window: ``backoff`` seconds, then twice that, up to ``backoff_max``. When
more than ``max_restarts`` crashes fall inside ``window`` seconds the service
is left stopped and marked failed: it is broken, not unlucky, and restarting
it forever would only bury its log under start-up noise. The other services
keep running; ``lgos-demo-stack restart NAME`` brings it back.

Tests pass ``backoff=0`` and a clock of their own, so nothing sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RestartPolicy:
    backoff: float = 1.0
    """Seconds before the first restart after a crash."""
    backoff_max: float = 30.0
    max_restarts: int = 5
    """Crashes tolerated inside ``window``; one more and the service fails."""
    window: float = 300.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def __post_init__(self) -> None:
        if self.backoff < 0 or self.backoff_max < self.backoff:
            raise ValueError(
                "restart back-off: need 0 <= backoff <= backoff_max, got "
                f"{self.backoff} and {self.backoff_max}"
            )
        if self.max_restarts < 0 or self.window <= 0:
            raise ValueError(
                "restart policy: need max_restarts >= 0 and window > 0, got "
                f"{self.max_restarts} and {self.window}"
            )

    def delay(self, crashes: int) -> float:
        """The back-off before restarting after the ``crashes``-th recent crash."""
        if crashes < 1:
            return 0.0
        return min(self.backoff * 2.0 ** (crashes - 1), self.backoff_max)


@dataclass
class CrashHistory:
    """One service's recent crashes, judged by a ``RestartPolicy``."""

    policy: RestartPolicy
    times: list[float] = field(default_factory=list)

    def record(self) -> float | None:
        """Note a crash now; the delay before restarting, or ``None`` to give up."""
        now = self.policy.clock()
        self.times = [t for t in self.times if now - t < self.policy.window]
        self.times.append(now)
        if len(self.times) > self.policy.max_restarts:
            return None
        return self.policy.delay(len(self.times))

    def forget(self) -> None:
        """A person restarted it: its past crashes no longer count."""
        self.times.clear()
