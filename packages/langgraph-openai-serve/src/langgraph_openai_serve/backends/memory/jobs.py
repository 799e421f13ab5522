"""``InProcessQueue``: jobs as asyncio tasks of this process.

The memory backend's queue: a job starts as soon as it is deferred (there is
no separate worker), at most ``concurrency`` run at once (a freed slot goes
to the waiting job the fair share ranks first), and they die with the process. It
keeps the queue contract (``jobs/protocol.py``) otherwise: locks, queueing
locks, retries after the task's policy, ``abandoned``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.backends.memory.slots import FairSlots
from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import (
    Job,
    JobWorker,
    Priority,
    Task,
    work_kind,
)
from langgraph_openai_serve.observability.queue import QueueStats, WorkCount
from langgraph_openai_serve.operations.readiness import Check

logger = logging.getLogger("langgraph_openai_serve")


@dataclass(eq=False, slots=True)
class _Entry:
    job: Job
    attempts: int
    due: float
    """Monotonic time it may start (later than now after a failure)."""
    running: bool = False
    has_lock: bool = False
    """It holds its lock and waits for a slot (or runs)."""
    dropped: bool = False
    """Cancelled while it waited (``cancel``): it never runs."""
    task: asyncio.Task[None] | None = field(default=None, repr=False)


class InProcessQueue:
    """Runs each deferred job in a task of this process."""

    transactional = False
    """A job starts at once, before a store transaction could commit: callers
    defer after it."""

    def __init__(self, concurrency: int = 8, fair: FairShare | None = None) -> None:
        self._fair = fair or FairShare()
        self._slots = FairSlots(concurrency, self._fair)
        self._tasks: dict[str, Task] = {}
        self._entries: set[_Entry] = set()
        self._waiting_for: dict[str, _Entry] = {}
        """Queueing lock -> the job holding it while it waits."""
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def register(self, task: Task) -> None:
        if task.name in self._tasks:
            raise RuntimeError(f"a task {task.name!r} is registered here already")
        self._tasks[task.name] = task

    async def defer(self, jobs: Sequence[Job], transaction: Any = None) -> int:
        del transaction
        queued = 0
        for job in jobs:
            if job.task not in self._tasks:
                raise RuntimeError(f"no task {job.task!r} is registered here")
            if job.queueing_lock is not None and job.queueing_lock in self._waiting_for:
                continue
            self._start(_Entry(job, 0, time.monotonic()))
            queued += 1
        return queued

    def _start(self, entry: _Entry) -> None:
        if entry.job.queueing_lock is not None:
            self._waiting_for[entry.job.queueing_lock] = entry
        self._entries.add(entry)
        entry.task = asyncio.create_task(
            self._run(entry), name=f"lgos-job-{entry.job.task}"
        )

    async def _run(self, entry: _Entry) -> None:
        job = entry.job
        task = self._tasks[job.task]
        delay = entry.due - time.monotonic()
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            async with self._held(job.lock):
                entry.has_lock = True
                async with self._slots.held(job.priority, job.tenant, entry.due):
                    self._started(entry)
                    await task.run(job.args, entry.attempts)
        except asyncio.CancelledError:
            raise  # dropped, or the queue closes: its jobs go with the process
        except Exception as error:
            await self._failed(entry, task, error)
        finally:
            self._ended(entry)

    def _started(self, entry: _Entry) -> None:
        entry.running = True
        lock = entry.job.queueing_lock
        if lock is not None and self._waiting_for.get(lock) is entry:
            del self._waiting_for[lock]

    def _ended(self, entry: _Entry) -> None:
        self._entries.discard(entry)
        lock = entry.job.queueing_lock
        if lock is not None and self._waiting_for.get(lock) is entry:
            del self._waiting_for[lock]

    async def _failed(self, entry: _Entry, task: Task, error: Exception) -> None:
        delay = task.retry(error, entry.attempts, entry.job.args)
        if delay is not None:
            logger.warning(
                "jobs.retry task=%s in=%.1fs error=%s", task.name, delay, error
            )
            self._start(_Entry(entry.job, entry.attempts + 1, time.monotonic() + delay))
            return
        logger.error("jobs.abandoned task=%s", task.name, exc_info=error)
        if task.abandoned is not None:
            try:
                await task.abandoned(entry.job.args)
            except Exception:
                logger.exception("jobs.abandon_failed task=%s", task.name)

    @contextlib.asynccontextmanager
    async def _held(self, name: str | None) -> Any:
        """``name``'s lock for the block (nothing when it has none); the lock
        is forgotten when its last user leaves."""
        if name is None:
            yield
            return
        lock, users = self._locks.get(name, (asyncio.Lock(), 0))
        self._locks[name] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[name]
            if users == 1:
                del self._locks[name]
            else:
                self._locks[name] = (lock, users - 1)

    def _matching(self, task: str, lock: str) -> list[_Entry]:
        return [
            entry
            for entry in self._entries
            if entry.job.task == task and entry.job.lock == lock
        ]

    async def live(self, task: str, lock: str) -> bool:
        return bool(self._matching(task, lock))

    async def outranked(self, priority: Priority, tenant: str | None) -> bool:
        mine = self._fair.share(tenant or "", self._slots.holding(tenant) - 1)
        now = time.monotonic()
        for entry in self._entries:
            job = entry.job
            if (
                entry.running
                or entry.dropped
                or entry.due > now
                or not (entry.has_lock or not self._lock_taken(job.lock))
            ):
                continue
            effective = self._fair.effective(job.priority, now - entry.due)
            share = self._fair.share(job.tenant or "", self._slots.holding(job.tenant))
            if effective > priority or (effective == priority and share < mine):
                return True
        return False

    def _lock_taken(self, name: str | None) -> bool:
        held = self._locks.get(name) if name is not None else None
        return held is not None and held[0].locked()

    async def cancel(self, task: str, lock: str) -> bool:
        nobody_runs_it = True
        for entry in self._matching(task, lock):
            if entry.running:
                nobody_runs_it = False
            elif entry.task is not None:
                entry.dropped = True
                entry.task.cancel()
        return nobody_runs_it

    async def stats(self) -> QueueStats:
        now = time.monotonic()
        ready = [e.due for e in self._entries if not e.running and e.due <= now]
        running = sum(1 for entry in self._entries if entry.running)
        counts: dict[tuple[str, str], list[int]] = {}
        for entry in self._entries:
            job = entry.job
            count = counts.setdefault(
                (work_kind(job.priority), job.tenant or ""), [0, 0]
            )
            if entry.running:
                count[1] += 1
            elif entry.due <= now:
                count[0] += 1
        work = tuple(
            WorkCount(kind, tenant, ready_, running_)
            for (kind, tenant), (ready_, running_) in counts.items()
        )
        return QueueStats(len(ready), running, now - min(ready, default=now), work)

    def checks(self) -> dict[str, Check]:
        return {}

    def worker(
        self,
        *,
        concurrency: int,
        shutdown_timeout: float,
        heartbeat_interval: float,
        stalled_check_interval: float,
    ) -> JobWorker:
        raise GraphConfigurationError(
            "lgos worker needs LGOS_BACKGROUND_BACKEND=postgres."
        )

    async def close(self) -> None:
        tasks = [entry.task for entry in self._entries if entry.task is not None]
        for running in tasks:
            running.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
