"""The fair share on procrastinate's tables: which job a worker takes.

procrastinate fetches the waiting job of highest priority, then lowest id.
LGOS ranks them as ``jobs/fairness.py`` says (class raised by age, then the
tenant's running jobs for its weight, then arrival) in one statement over
the whole fleet's queue, with procrastinate's own rules kept: the job is due,
no job of its lock runs, and no job of its lock waits ahead of it.

The statement stays flat however many jobs wait: it visits each waiting
(tenant, priority) pair once through ``lgos_jobs_waiting`` (a skip scan:
one index probe a pair, landing on the pair's first job) and takes the first
eligible job of each (that first one unless it may not be taken, without a
second probe), so its cost grows with the tenants waiting, not the jobs; the
running ones it counts are the fleet's slots at most. Past the index probes
it reads a job's events only where its wait can raise its class, and locks
the ranking's first job alone unless another worker holds it. On a queue of
100,000 waiting jobs over 16 (tenant, priority) pairs a take reads about 210
buffers where the statement that probed each pair twice read 340.

A job's tenant is its ``args``' ``lgos_tenant`` (``queue.py`` adds it, and
strips it before the task sees its arguments); jobs without one are the
deployment's own, as one tenant ``""``.

``FairJobManager`` puts it in place of procrastinate's fetch; ``OUTRANKED``
answers ``JobQueue.outranked`` from the same ranking.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from procrastinate import jobs
from procrastinate.exceptions import UniqueViolation

from langgraph_openai_serve.backends.postgres.job_manager import OutlastingJobManager
from langgraph_openai_serve.jobs.fairness import AGING_STEP, TOP_CLASS, FairShare

QUEUE = "lgos_background"
"""procrastinate's queue for every LGOS job (named for its first task)."""
TENANT_ARG = "lgos_tenant"
"""The job argument naming its tenant."""

_TENANT = f"coalesce(args->>'{TENANT_ARG}', '')"

QUEUE_INDEXES = (
    # The waiting jobs by tenant and priority, for the skip scan and each
    # pair's first job.
    f"""CREATE INDEX IF NOT EXISTS lgos_jobs_waiting ON procrastinate_jobs
    ({_TENANT}, priority, id)
    WHERE status = 'todo' AND queue_name = '{QUEUE}'""",
    # A waiting job's lock, for "no job of its lock waits ahead of it".
    """CREATE INDEX IF NOT EXISTS lgos_jobs_waiting_lock ON procrastinate_jobs
    (lock, priority, id) WHERE status = 'todo' AND lock IS NOT NULL""",
    # The waiting jobs queued again or scheduled, for the queue's statistics
    # (queue_stats.py): the only ones whose wait is read one by one.
    f"""CREATE INDEX IF NOT EXISTS lgos_jobs_waiting_again ON procrastinate_jobs
    (id) WHERE status = 'todo' AND queue_name = '{QUEUE}'
    AND (attempts > 0 OR scheduled_at IS NOT NULL)""",
)
"""Indexes on procrastinate's table that the ranking and the queue's
statistics read through (created by ``lgos db-setup`` after procrastinate's
schema)."""

_HEAD_COLUMNS = "id, lock, scheduled_at"

WAITING_HEADS = f"""
heads AS (
    (SELECT {_TENANT} AS tenant, priority, {_HEAD_COLUMNS} FROM procrastinate_jobs
      WHERE status = 'todo' AND queue_name = '{QUEUE}'
      ORDER BY 1, 2, id LIMIT 1)
    UNION ALL
    SELECT later.*
      FROM heads AS head
      CROSS JOIN LATERAL (
        SELECT {_TENANT} AS tenant, priority, {_HEAD_COLUMNS}
          FROM procrastinate_jobs
         WHERE status = 'todo' AND queue_name = '{QUEUE}'
           AND ({_TENANT}, priority) > (head.tenant, head.priority)
         ORDER BY 1, 2, id LIMIT 1
      ) AS later
)"""
"""The first waiting job (lowest id) of each (tenant, priority): the probe
that skips to the next pair lands on its first job, so one probe a pair
finds both (a recursive CTE: ``WITH RECURSIVE``)."""


def _takeable(job: str) -> str:
    """procrastinate's rules for the waiting job ``job``: it is due, no job
    of its lock runs, and no job of its lock waits ahead of it."""
    return f"""({job}.scheduled_at IS NULL OR {job}.scheduled_at <= now())
           AND ({job}.lock IS NULL OR (
               NOT EXISTS (
                   SELECT 1 FROM procrastinate_jobs AS holder
                    WHERE holder.lock = {job}.lock AND holder.status = 'doing')
               AND NOT EXISTS (
                   SELECT 1 FROM procrastinate_jobs AS ahead
                    WHERE ahead.lock = {job}.lock AND ahead.status = 'todo'
                      AND (ahead.priority > {job}.priority OR (
                           ahead.priority = {job}.priority
                           AND ahead.id < {job}.id)))))"""


_RANKED = f"""
WITH RECURSIVE {WAITING_HEADS},
running AS (
    SELECT {_TENANT} AS tenant, count(*)::float8 AS jobs FROM procrastinate_jobs
     WHERE status = 'doing' AND worker_id IS NOT NULL AND queue_name = '{QUEUE}'
     GROUP BY 1
),
candidates AS MATERIALIZED (
    SELECT first.id, head.tenant, head.priority,
           -- A job's wait is read (its events) only where it can raise
           -- its class.
           CASE WHEN head.priority < {TOP_CLASS} THEN coalesce(greatest(
               first.scheduled_at, (
               SELECT max(event.at) FROM procrastinate_events AS event
                WHERE event.job_id = first.id AND event.type IN
                      ('deferred', 'deferred_for_retry', 'retried')
           )), now()) END AS since
      FROM heads AS head
      CROSS JOIN LATERAL (
        -- The pair's first job when it may be taken (no second probe),
        -- else its first job that may be.
        SELECT head.id, head.scheduled_at WHERE {_takeable("head")}
        UNION ALL
        (SELECT job.id, job.scheduled_at
           FROM procrastinate_jobs AS job
          WHERE job.status = 'todo' AND job.queue_name = '{QUEUE}'
            AND coalesce(job.args->>'{TENANT_ARG}', '') = head.tenant
            AND job.priority = head.priority AND job.id > head.id
            AND {_takeable("job")}
          ORDER BY job.id LIMIT 1)
        LIMIT 1
      ) AS first
),
weights AS (
    SELECT key AS tenant, value::float8 AS weight
      FROM jsonb_each_text(%(weights)s::jsonb)
),
ranked AS (
    SELECT candidate.id,
           CASE WHEN candidate.priority >= {TOP_CLASS} THEN candidate.priority
                ELSE least({TOP_CLASS}, candidate.priority + {AGING_STEP} * floor(
                    extract(epoch FROM now() - candidate.since) / %(aging)s))::int
           END AS effective,
           coalesce(running.jobs, 0) / coalesce(weights.weight, 1) AS share
      FROM candidates AS candidate
      LEFT JOIN running USING (tenant)
      LEFT JOIN weights USING (tenant)
)
"""

_FETCH = (
    _RANKED
    + f""",
eligible AS (
    SELECT * FROM ranked
     WHERE ranked.effective >= {TOP_CLASS} OR (
         SELECT count(*) FROM procrastinate_jobs
          WHERE worker_id = %(worker_id)s AND status = 'doing'
            AND priority < {TOP_CLASS}
     ) < %(regular_slots)s
),
in_order AS (
    SELECT * FROM eligible ORDER BY effective DESC, share, id
),
picked AS (
    -- Locked in the ranking's order until one is free: one row read when
    -- no other worker takes the first.
    SELECT job.id FROM in_order JOIN procrastinate_jobs AS job ON job.id = in_order.id
     WHERE job.status = 'todo'
     ORDER BY in_order.effective DESC, in_order.share, in_order.id
     LIMIT 1
     FOR UPDATE OF job SKIP LOCKED
),
taken AS (
    UPDATE procrastinate_jobs AS job SET status = 'doing', worker_id = %(worker_id)s
      FROM picked WHERE job.id = picked.id
    RETURNING job.id, job.status, job.task_name, job.priority, job.lock,
              job.queueing_lock, job.args, job.scheduled_at, job.queue_name,
              job.attempts, job.worker_id
)
SELECT taken.*, (SELECT count(*) FROM eligible) AS candidates
  FROM (SELECT 1) AS one LEFT JOIN taken ON true
"""
)
"""Take the first job of the ranking that no other worker is taking, below
the top class only while the worker's jobs below it hold fewer than its
regular slots (the rest are reserved for the top class); with it, how many
candidates there were (all of them taken by others meanwhile means: look
again)."""

OUTRANKED = (
    _RANKED
    + """
SELECT EXISTS (
    SELECT 1 FROM ranked
     WHERE ranked.effective > %(priority)s
        OR (ranked.effective = %(priority)s AND ranked.share < (
            coalesce((SELECT jobs FROM running WHERE tenant = %(tenant)s), 1) - 1
        ) / coalesce((SELECT weight FROM weights WHERE tenant = %(tenant)s), 1))
) AS outranked
"""
)

FETCH_TRIES = 5
"""Statements a fetch sends while other workers take every candidate it
ranked first (each sees the queue anew)."""


def fair_parameters(fair: FairShare) -> dict[str, Any]:
    """The statements' parameters that ``fair`` sets."""
    return {
        "weights": json.dumps(dict(fair.weights)),
        "aging": fair.aging if fair.aging is not None else float("inf"),
    }


class FairJobManager(OutlastingJobManager):
    """procrastinate's job manager, fetching in the fair share's order.

    ``regular_slots``: of the worker's slots, those jobs below the top class
    may hold (``None``: all; ``ProcrastinateQueue.worker`` sets it when the
    worker keeps reserved slots)."""

    def __init__(self, connector: Any, fair: FairShare) -> None:
        super().__init__(connector)
        self._parameters = fair_parameters(fair)
        self.regular_slots: int | None = None

    async def fetch_job(
        self, queues: Iterable[str] | None, worker_id: int
    ) -> jobs.Job | None:
        if queues is not None and list(queues) != [QUEUE]:
            return await super().fetch_job(queues, worker_id)
        for _ in range(FETCH_TRIES):
            try:
                row = await self.connector.execute_query_one_async(
                    _FETCH,
                    worker_id=worker_id,
                    regular_slots=self.regular_slots or 2**31 - 1,
                    **self._parameters,
                )
            except UniqueViolation:
                # Another worker took a job of the same lock at this moment.
                continue
            if row["id"] is not None:
                return jobs.Job.from_row(row)
            if not row["candidates"]:
                return None
        return None
