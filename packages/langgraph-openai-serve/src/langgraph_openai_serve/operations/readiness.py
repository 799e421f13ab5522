"""``/health/ready``'s verdict: the lifecycle, then each dependency's check.

A check is an async callable that returns when its dependency serves and
raises ``NotReady`` (or any error) saying why when it does not. Checks run
concurrently, and the verdict waits for them ``timeout`` seconds at most,
so a database that hangs makes the process not-ready rather than making the
probe time out (a Kubernetes probe's default timeout is 1 s). A check still
going when its time is up goes on alone, and is not started again while it
does: a stalled database cannot pile up one blocked check per probe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.operations.lifecycle import Lifecycle

Check = Callable[[], Awaitable[None]]

CHECK_TIMEOUT = 0.8
"""Seconds the verdict waits for its checks: a check not done by then
counts as failed."""


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
        self._running: dict[str, asyncio.Future[None]] = {}
        """Checks that outlived a verdict, by name, while they go on."""

    async def verdict(self) -> Verdict:
        if self.lifecycle.draining:
            return Verdict(False, self.stopping_reason)
        if not self.lifecycle.started:
            return Verdict(False, "starting")
        tasks = {name: self._started(name) for name in self.checks}
        if tasks:
            await asyncio.wait(tasks.values(), timeout=self.timeout)
        checks = {name: self._said(name, task) for name, task in tasks.items()}
        failed = [f"{name}: {said}" for name, said in checks.items() if said != "ok"]
        return Verdict(not failed, failed[0] if failed else None, checks)

    def _started(self, name: str) -> asyncio.Future[None]:
        """The check's task: the one still going from an earlier verdict, or
        a new one."""
        running = self._running.get(name)
        if running is not None and not running.done():
            return running
        task = asyncio.ensure_future(self.checks[name]())
        self._running[name] = task
        task.add_done_callback(_retrieved)
        return task

    def _said(self, name: str, task: asyncio.Future[None]) -> str:
        if not task.done():
            return f"no answer within {self.timeout:g} s"
        self._running.pop(name, None)
        if task.cancelled():
            return "cancelled"
        error = task.exception()
        if error is None:
            return "ok"
        return str(error) or type(error).__name__  # any failure is the answer


def _retrieved(task: asyncio.Future[None]) -> None:
    """A check's failure is its verdict's answer, never an unretrieved error."""
    if not task.cancelled():
        task.exception()
