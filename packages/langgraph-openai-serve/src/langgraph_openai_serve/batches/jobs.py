"""A batch's steps as jobs of the deployment's queue.

Steps are jobs of one task on the queue background Responses use, so the
workers there are the batch's workers, and the stalled-job sweep that re-runs
a dead worker's jobs re-runs its steps too. A step's ``lock`` keeps two runs
of one chunk (or a batch's validate and finalize) from overlapping, and its
queueing lock keeps one of each waiting. A step stopped by its worker's
shutdown goes back to the queue at once; one that raised is retried with
back-off, and after ``MAX_ATTEMPTS`` its batch fails (``abandoned``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langgraph_openai_serve.batches.protocol import BatchStep
from langgraph_openai_serve.jobs.protocol import (
    Job,
    JobArgs,
    JobQueue,
    Priority,
    Task,
)
from langgraph_openai_serve.jobs.retry import doubling

TASK_NAME = "lgos.run_batch_step"
MAX_ATTEMPTS = 6

StepHandler = Callable[[BatchStep], Awaitable[None]]


def step_job(step: BatchStep, tenant: str | None) -> Job:
    return Job(
        TASK_NAME,
        {"kind": step.kind, "batch_id": step.batch_id, "chunk": step.chunk},
        lock=step.lock,
        queueing_lock=f"{step.kind}:{step.lock}",
        # Lines are bulk; validation and finalisation, short, are what a
        # batch's owner waits on.
        priority=Priority.BULK if step.kind == "chunk" else Priority.STEP,
        tenant=tenant,
    )


async def defer_steps(
    jobs: JobQueue,
    steps: Sequence[BatchStep],
    scope: str | None,
    transaction: Any = None,
) -> None:
    """Queue ``steps`` of a batch of ``scope`` (its tenant; ``None``: not
    known here) inside the store's ``transaction`` when given; a step that
    waits in the queue already is not queued twice."""
    await jobs.defer([step_job(step, scope) for step in steps], transaction)


def step_task(run: StepHandler, give_up: StepHandler) -> Task:
    """The task that runs steps with ``run``; ``give_up`` fails the batch of
    a step that kept failing."""

    async def handle(args: JobArgs, attempts: int) -> None:
        del attempts
        await run(_step(args))

    async def abandoned(args: JobArgs) -> None:
        await give_up(_step(args))

    return Task(TASK_NAME, handle, doubling(MAX_ATTEMPTS), abandoned)


def _step(args: JobArgs) -> BatchStep:
    return BatchStep(args["kind"], args["batch_id"], int(args["chunk"]))
