"""``/health/ready``'s verdict: the lifecycle, then each dependency's check.

A check is an async callable that returns when its dependency serves and
raises ``NotReady`` (or any error) saying why when it does not. Checks run
concurrently, and the verdict waits for them ``timeout`` seconds at most,
so a database that hangs makes the process not-ready rather than making the
probe time out (a Kubernetes probe's default timeout is 1 s). A check still
going when its time is up goes on alone, and is not started again while it
does: a stalled database cannot pile up one blocked check per probe.

The route answers without a key, so the verdict says only a short code per
check (``ok``, ``timeout``, ``unavailable`` or the ``NotReady``'s own code)
and the first failure's as the reason (``postgres_unavailable``): an
exception's text can hold a database's host and user. The text goes to the
log, once each time a check's answer changes, not on every probe.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.operations.lifecycle import Lifecycle

logger = logging.getLogger("langgraph_openai_serve")

Check = Callable[[], Awaitable[None]]

CHECK_TIMEOUT = 0.8
"""Seconds the verdict waits for its checks: a check not done by then
counts as failed."""

OK = "ok"
TIMEOUT = "timeout"
UNAVAILABLE = "unavailable"
"""A check that raised anything but ``NotReady``."""


class NotReady(Exception):
    """A dependency does not serve: ``code`` says why in a word, for the
    probe's answer; the message says it in full, for the log."""

    def __init__(self, message: str, *, code: str = UNAVAILABLE) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer of ``/health/ready``."""

    ready: bool
    reason: str | None = None
    """Why not ready, as a code: ``starting``, the lifecycle's stopping
    reason, or the first failed check's name and code
    (``postgres_timeout``)."""
    checks: dict[str, str] = field(default_factory=dict)
    """Each dependency check's code: ``"ok"`` or why it failed."""

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
        stopping_reason: str = "draining",
        timeout: float = CHECK_TIMEOUT,
    ) -> None:
        self.lifecycle = lifecycle
        self.checks = dict(checks or {})
        self.stopping_reason = stopping_reason
        self.timeout = timeout
        self._running: dict[str, asyncio.Future[None]] = {}
        """Checks that outlived a verdict, by name, while they go on."""
        self._logged: dict[str, str] = {}
        """What the log last said of each check (its detail), by name."""

    async def verdict(self) -> Verdict:
        if self.lifecycle.draining:
            return Verdict(False, self.stopping_reason)
        if not self.lifecycle.started:
            return Verdict(False, "starting")
        tasks = {name: self._started(name) for name in self.checks}
        if tasks:
            await asyncio.wait(tasks.values(), timeout=self.timeout)
        checks = {name: self._said(name, task) for name, task in tasks.items()}
        failed = [f"{name}_{said}" for name, said in checks.items() if said != OK]
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
        """The check's code; its detail goes to the log when it changed."""
        if task.done():
            self._running.pop(name, None)
            code, detail = _outcome(task)
        else:
            code, detail = TIMEOUT, f"no answer within {self.timeout:g} s"
        if self._logged.get(name, OK) != detail:
            if code == OK:
                logger.info("health.check_ok check=%s", name)
            else:
                logger.warning(
                    "health.check_failed check=%s code=%s: %s", name, code, detail
                )
            self._logged[name] = detail
        return code


def _outcome(task: asyncio.Future[None]) -> tuple[str, str]:
    """A finished check's code and detail: any failure is an answer."""
    if task.cancelled():
        return UNAVAILABLE, "cancelled"
    error = task.exception()
    if error is None:
        return OK, OK
    code = error.code if isinstance(error, NotReady) else UNAVAILABLE
    return code, str(error) or type(error).__name__


def _retrieved(task: asyncio.Future[None]) -> None:
    """A check's failure is its verdict's answer, never an unretrieved error."""
    if not task.cancelled():
        task.exception()
