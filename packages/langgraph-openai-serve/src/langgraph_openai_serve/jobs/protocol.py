"""The contract of the job runtime: one queue, many tasks, any backend.

Everything LGOS does later than the request that asked for it is a ``Job``
of a named ``Task`` on one ``JobQueue``: a background Response's run, a
batch's steps, a webhook delivery. A task is registered once, when the
deployment's services are built; a job names its task and carries JSON
arguments. The queue knows no Responses, batches or webhooks: what a job
means is its task's business.

What every queue promises (``tests/test_job_queue.py`` holds both backends
to it):

- **Locks.** Jobs sharing a ``lock`` never run at the same time; a job
  whose lock is held waits without taking a worker slot. At most one job
  with a given ``queueing_lock`` waits at a time: deferring another is
  skipped (``defer`` returns how many it queued).
- **Transactions.** ``defer(jobs, transaction)`` queues inside the caller's
  store transaction when the queue is ``transactional`` (PostgreSQL), so a
  job exists exactly when what it works on does. The in-process queue starts
  jobs at once, so callers defer only after their store committed.
- **Retries.** A job whose handler raises runs again after the seconds its
  task's ``retry`` policy gives; when the policy gives none it is
  abandoned (``Task.abandoned`` hears of it). A job cancelled because its
  worker stops (``CancelledError``) is handed back: the policy is asked
  too, and every LGOS policy answers "at once".
- **Fair share.** A free slot takes the waiting job of highest
  ``priority`` first (someone waits on a background Response's first event,
  while a batch's lines are bulk), a job rising in priority as it waits;
  among equals, the job of the tenant using fewest slots for its weight,
  then the one queued first (``fairness.py``). A long job of low priority
  offers its slot back between its pieces (``outranked``), so urgent work
  and other tenants wait for one piece, not the job.
- **Recovery.** A durable queue (PostgreSQL) runs again the jobs of a worker
  that stopped heartbeating (``worker()``: heartbeats, the stalled-job
  sweep); the in-process queue dies with its process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Protocol

from langgraph_openai_serve.observability.queue import QueueStats
from langgraph_openai_serve.operations.readiness import Check

JobArgs = dict[str, Any]
"""A job's arguments: JSON values, the same on every attempt."""


class Priority(IntEnum):
    """Which waiting job a free slot takes first: the highest."""

    BULK = 0
    """A batch's lines: nobody waits on one of them."""
    STEP = 10
    """Short steps that others wait on: a batch's validation and
    finalisation, a webhook delivery."""
    INTERACTIVE = 20
    """A background Response: a client waits for its first event."""


def work_kind(priority: int) -> str:
    """A priority's name in the metrics (``other`` when it is none of ours)."""
    try:
        return Priority(priority).name.lower()
    except ValueError:
        return "other"


@dataclass(frozen=True, slots=True)
class Job:
    task: str
    """The registered ``Task.name`` that runs it."""
    args: JobArgs
    lock: str | None = None
    """Jobs with the same lock never run at once."""
    queueing_lock: str | None = None
    """At most one job with it waits at a time (another is skipped)."""
    priority: Priority = Priority.STEP
    tenant: str | None = None
    """The scope whose work it is, for the fair share of slots (``None``:
    the deployment's own, one tenant of its own)."""


Handler = Callable[[JobArgs, int], Awaitable[None]]
"""Runs one job: its arguments and how many attempts it had before this one."""

RetryPolicy = Callable[[BaseException, int, JobArgs], float | None]
"""Seconds before a job that raised runs again (given the error, the
attempts it had before this one and its arguments); ``None``: never."""


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    run: Handler
    retry: RetryPolicy
    abandoned: Callable[[JobArgs], Awaitable[None]] | None = None
    """Hears of a job whose last attempt raised and that will not run again
    (a batch step fails its batch)."""


class JobWorker(Protocol):
    """One process's loop over a durable queue (``lgos worker``)."""

    async def run(self) -> None:
        """Take and run jobs until ``stop()``; then give running ones the
        shutdown timeout, hand the rest back, and return."""
        ...

    def stop(self) -> None: ...

    async def check(self) -> None:
        """Readiness: raise ``NotReady`` unless registered and heartbeating."""
        ...


class JobQueue(Protocol):
    transactional: bool
    """Whether ``defer`` joins the caller's store transaction."""

    def register(self, task: Task) -> None:
        """Make ``task``'s jobs runnable here (before any is deferred); a
        name registers once (a queue serves one deployment's services)."""
        ...

    async def defer(self, jobs: Sequence[Job], transaction: Any = None) -> int:
        """Queue ``jobs`` (in ``transaction`` when given and the queue is
        transactional); how many were queued (a job whose queueing lock
        already waits is not)."""
        ...

    async def live(self, task: str, lock: str) -> bool:
        """Whether a job of ``task`` with ``lock`` waits or runs."""
        ...

    async def outranked(self, priority: Priority, tenant: str | None) -> bool:
        """Whether a waiting job (due, its lock free) would be taken before
        a job of ``priority`` and ``tenant`` queued now, were the slot of
        the running job asking free: it offers its slot back then."""
        ...

    async def cancel(self, task: str, lock: str) -> bool:
        """Drop the waiting jobs of ``task`` with ``lock``; whether no live
        worker runs one now (so nobody else will end its work)."""
        ...

    async def stats(self) -> QueueStats:
        """Jobs waiting (due now) and running, and the oldest wait."""
        ...

    def checks(self) -> dict[str, Check]:
        """What ``/health/ready`` checks of the queue (none in process)."""
        ...

    def worker(
        self,
        *,
        concurrency: int,
        shutdown_timeout: float,
        heartbeat_interval: float,
        stalled_check_interval: float,
    ) -> JobWorker:
        """A worker loop for ``lgos worker``.

        Raises:
            GraphConfigurationError: the queue runs its jobs in this process
                and has no separate workers.
        """
        ...

    async def close(self) -> None:
        """Stop running jobs here (handing them back) and let go of
        connections."""
        ...
