"""An orchestrator's restart policy for ``lgos-bench outage``'s fleet.

A process that exits when the database goes away (before issue 45, a
worker whose job fetch met a terminated connection did) is a finding: it is
noted, with its exit code and when it was seen gone. It is then started
again on the same port, as Kubernetes would restart its container, so the
phases after it still measure a whole fleet, and the probes and clients
find it where they looked before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from urllib.parse import urlsplit

from lgos_stack.processes import RunningProcess

from lgos_bench.fleet import Fleet, Log

CHECK_EVERY = 0.5


@dataclass(frozen=True, slots=True)
class Exit:
    """One ``lgos`` process the bench saw gone (``time.monotonic()``)."""

    target: str
    """``api``, ``worker 0`` ... (as the probes name them)."""
    seen: float
    code: int | None
    restarted: float | None
    """When its replacement was ready; ``None``: it could not be started
    before the run ended."""


@dataclass
class _Slot:
    """Where one process of the fleet runs, and how to start it again."""

    process: RunningProcess
    start: Callable[[], RunningProcess]
    down_since: float | None = None


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None, url
    return port


class Supervisor:
    """Watches the fleet's first API and its workers until ``stop``."""

    def __init__(self, running: Fleet, log: Log) -> None:
        api = running.started_apis[0]
        port = _port(api.base)
        self._slots = {
            "api": _Slot(api.process, lambda: running.start_api(port=port).process)
        }
        for number, url in enumerate(list(running.worker_health)):
            start = partial(running.start_worker, port=_port(url))
            self._slots[f"worker {number}"] = _Slot(
                running.started_workers[number], start
            )
        self._log = log
        self._stopping = asyncio.Event()
        self.exits: list[Exit] = []

    async def _check(self) -> None:
        for target, slot in self._slots.items():
            if not slot.process.exited():
                continue
            if slot.down_since is None:
                slot.down_since = time.monotonic()
                code = slot.process.process.returncode
                self._log(f"{target} exited (code {code}); starting it again")
            try:
                # Blocking (it waits for /health/ready): off the event loop.
                started = await asyncio.to_thread(slot.start)
            except (RuntimeError, TimeoutError) as exc:
                self._log(f"{target} did not start again yet: {str(exc)[:200]}")
                continue
            code = slot.process.process.returncode
            self.exits.append(Exit(target, slot.down_since, code, time.monotonic()))
            slot.process, slot.down_since = started, None

    async def run(self) -> None:
        """Until ``stop``: every ``CHECK_EVERY`` s, start again what exited."""
        while not self._stopping.is_set():
            await self._check()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), CHECK_EVERY)

    def stop(self) -> None:
        """``run`` ends after its check under way (a start is not cut)."""
        self._stopping.set()

    def still_down(self) -> list[Exit]:
        """Processes seen gone and not started again."""
        return [
            Exit(target, slot.down_since, slot.process.process.returncode, None)
            for target, slot in self._slots.items()
            if slot.down_since is not None
        ]
