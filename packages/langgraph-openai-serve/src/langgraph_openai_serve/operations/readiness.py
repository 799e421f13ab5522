"""``/health/ready``'s verdict: the lifecycle, then each dependency's check.

A check is an async callable that returns when its dependency serves and
raises ``NotReady`` (or any error) saying why when it does not. Checks run
concurrently, each bounded by ``timeout`` seconds, so a database that hangs
makes the process not-ready rather than making the probe time out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.operations.lifecycle import Lifecycle

Check = Callable[[], Awaitable[None]]

CHECK_TIMEOUT = 2.0
"""Seconds one dependency check may take before it counts as failed."""


class NotReady(Exception):
    """A dependency does not serve; the message says why."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer of ``/health/ready``."""

    ready: bool
    reason: str | None = None
    """Why not ready: the first problem found."""
    checks: dict[str, str] = field(default_factory=dict)
    """Each dependency check: ``"ok"`` or what failed."""

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": "ready" if self.ready else "not_ready"}
        if self.reason is not None:
            body["reason"] = self.reason
        if self.checks:
            body["checks"] = self.checks
        return body


class Readiness:
    """Ready: started, not draining, and every check passes."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        checks: Mapping[str, Check] | None = None,
        *,
        stopping_reason: str = "draining: the process is shutting down",
        timeout: float = CHECK_TIMEOUT,
    ) -> None:
        self.lifecycle = lifecycle
        self.checks = dict(checks or {})
        self.stopping_reason = stopping_reason
        self.timeout = timeout

    async def verdict(self) -> Verdict:
        if self.lifecycle.draining:
            return Verdict(False, self.stopping_reason)
        if not self.lifecycle.started:
            return Verdict(False, "starting")
        names = list(self.checks)
        outcomes = await asyncio.gather(*(self._run(name) for name in names))
        checks = dict(zip(names, outcomes, strict=True))
        failed = [f"{name}: {said}" for name, said in checks.items() if said != "ok"]
        return Verdict(not failed, failed[0] if failed else None, checks)

    async def _run(self, name: str) -> str:
        try:
            async with asyncio.timeout(self.timeout):
                await self.checks[name]()
        except TimeoutError:
            return f"no answer within {self.timeout:g} s"
        except Exception as error:  # any failure is the answer, never a 500
            return str(error) or type(error).__name__
        return "ok"
