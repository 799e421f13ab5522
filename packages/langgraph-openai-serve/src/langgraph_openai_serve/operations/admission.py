"""Admission: how many foreground runs this process, and each tenant in it,
may have going at once; and the bounds on a tenant's queued work over the
fleet (background Responses, open batches), which their stores keep.

A request past a limit is refused at once, never queued: a wait that grows
with the load is a latency nobody can plan for, while a refusal with
``Retry-After`` is one the official SDKs retry on their own. A tenant past
its own share gets ``429 rate_limit_exceeded``; a process past its capacity
``503 server_overloaded`` (the next try may land on another process).

A run is admitted when its request is (``RunGate.admit``) and released when
its answer is sent, or its stream ends (``Admitted.release``, idempotent).
The counts live in this process only: they cost a dictionary update per
request, not a database round trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Limit = Literal[
    "process_runs",
    "process_streams",
    "tenant_runs",
    "tenant_background",
    "tenant_batches",
]

RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True, slots=True)
class TenantLimits:
    """One tenant's bounds (``None``: unbounded)."""

    runs: int | None = 64
    """Foreground runs at once, in one process."""
    background: int | None = 128
    """Background Responses queued or running, over the fleet."""
    batches: int | None = 16
    """Batches not yet ended, over the fleet."""


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Every bound a process applies: its own, and each tenant's (the
    default, or the tenant's override by scope)."""

    process_runs: int | None = 256
    process_streams: int | None = 1024
    """Streams following background Responses, open at once in one process
    (a streamed foreground run counts in ``process_runs``)."""
    tenant: TenantLimits = field(default_factory=TenantLimits)
    overrides: Mapping[str, TenantLimits] = field(default_factory=dict)

    def of(self, scope: str) -> TenantLimits:
        return self.overrides.get(scope, self.tenant)


class LimitReached(Exception):
    """A request past one of the limits: refused, nothing of it started."""

    def __init__(self, limit: Limit, allowed: int) -> None:
        self.limit = limit
        self.allowed = allowed
        self.retry_after = RETRY_AFTER_SECONDS
        if limit == "process_streams":
            text = (
                f"The server has {allowed} response streams open, its "
                "capacity; retry shortly."
            )
        elif limit == "tenant_runs":
            text = (
                f"This API key has {allowed} requests running on this server "
                "already, its limit; retry when one has ended."
            )
        elif limit == "tenant_background":
            text = (
                f"This API key has {allowed} background responses queued or "
                "running already, its limit; retry when one has ended."
            )
        elif limit == "tenant_batches":
            text = (
                f"This API key has {allowed} batches in progress already, its "
                "limit; retry when one has ended."
            )
        else:
            text = (
                f"The server is running {allowed} requests, its capacity; "
                "retry shortly."
            )
        super().__init__(text)

    @property
    def by_tenant(self) -> bool:
        """The tenant's own limit (429) rather than the process's (503)."""
        return self.limit.startswith("tenant_")


class Admitted:
    """One admitted run, or stream following one (``scope`` ``None``);
    ``release()`` once it has answered (again: nothing)."""

    __slots__ = ("_gate", "_scope")

    def __init__(self, gate: RunGate, scope: str | None) -> None:
        self._gate: RunGate | None = gate
        self._scope = scope

    def release(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate._release(self._scope)

    def counting(self, gauge: Any) -> _Streaming:
        """What a stream's response counts itself with: ``gauge`` (may be
        ``None``) while it streams, and this run's release when it ends."""
        return _Streaming(self, gauge)


class _Streaming:
    __slots__ = ("_admitted", "_gauge")

    def __init__(self, admitted: Admitted, gauge: Any) -> None:
        self._admitted = admitted
        self._gauge = gauge

    def inc(self) -> None:
        if self._gauge is not None:
            self._gauge.inc()

    def dec(self) -> None:
        if self._gauge is not None:
            self._gauge.dec()
        self._admitted.release()


class RunGate:
    """Counts this process's foreground runs, in all and by tenant, and its
    streams following background Responses."""

    def __init__(self, limits: RunLimits) -> None:
        self.limits = limits
        self.running = 0
        self.following = 0
        self._by_tenant: dict[str, int] = {}

    def admit(self, scope: str) -> Admitted:
        """Admit one run of ``scope``.

        Raises:
            LimitReached: the process or the tenant is at its limit.
        """
        process = self.limits.process_runs
        if process is not None and self.running >= process:
            raise LimitReached("process_runs", process)
        own = self._by_tenant.get(scope, 0)
        tenant = self.limits.of(scope).runs
        if tenant is not None and own >= tenant:
            raise LimitReached("tenant_runs", tenant)
        self.running += 1
        self._by_tenant[scope] = own + 1
        return Admitted(self, scope)

    def follow(self) -> Admitted:
        """Admit one stream following a background Response.

        Raises:
            LimitReached: the process has ``process_streams`` open.
        """
        most = self.limits.process_streams
        if most is not None and self.following >= most:
            raise LimitReached("process_streams", most)
        self.following += 1
        return Admitted(self, None)

    def running_of(self, scope: str) -> int:
        return self._by_tenant.get(scope, 0)

    def _release(self, scope: str | None) -> None:
        if scope is None:
            self.following -= 1
            return
        self.running -= 1
        left = self._by_tenant[scope] - 1
        if left:
            self._by_tenant[scope] = left
        else:
            del self._by_tenant[scope]
