"""Where a background run's first event spends its time, timed by the database.

The background bench installs these triggers in its throwaway PostgreSQL
(never in a real deployment's). Each stamps ``clock_timestamp()`` as a row
is written, for the stages between a submit and its first stored event:

- ``stored``: the submit's insert of the queued Response (API process);
- ``picked``: a worker takes the job (procrastinate sets it ``doing``);
- ``attempt``: the worker counts the attempt (``start_attempt``);
- ``running``: it stores the ``in_progress`` snapshot;
- ``first_event``: it stores the stream's first event (``seq`` 0).

A stamp is taken when its statement runs, before its transaction commits;
the client's clock is the same machine's wall clock (``time.time()``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import psycopg

STAGES = ("stored", "picked", "attempt", "running", "first_event")

_SQL = """
CREATE TABLE IF NOT EXISTS lgos_bench_marks (
    response_id text NOT NULL,
    stage text NOT NULL,
    at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE OR REPLACE FUNCTION lgos_bench_mark_response() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lgos_bench_marks (response_id, stage) VALUES (NEW.id, TG_ARGV[0]);
    RETURN NEW;
END
$$;
CREATE OR REPLACE FUNCTION lgos_bench_mark_job() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lgos_bench_marks (response_id, stage)
    VALUES (NEW.args->>'response_id', TG_ARGV[0]);
    RETURN NEW;
END
$$;
CREATE OR REPLACE FUNCTION lgos_bench_mark_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lgos_bench_marks (response_id, stage)
    VALUES (NEW.response_id, TG_ARGV[0]);
    RETURN NEW;
END
$$;
CREATE OR REPLACE TRIGGER lgos_bench_stored
    AFTER INSERT ON lgos_background_responses
    FOR EACH ROW EXECUTE FUNCTION lgos_bench_mark_response('stored');
CREATE OR REPLACE TRIGGER lgos_bench_picked
    AFTER UPDATE OF status ON procrastinate_jobs
    FOR EACH ROW WHEN (OLD.status = 'todo' AND NEW.status = 'doing')
    EXECUTE FUNCTION lgos_bench_mark_job('picked');
CREATE OR REPLACE TRIGGER lgos_bench_attempt
    AFTER UPDATE OF attempts_started ON lgos_background_responses
    FOR EACH ROW WHEN (NEW.attempts_started = 1 AND OLD.attempts_started = 0)
    EXECUTE FUNCTION lgos_bench_mark_response('attempt');
CREATE OR REPLACE TRIGGER lgos_bench_running
    AFTER UPDATE OF snapshot ON lgos_background_responses
    FOR EACH ROW WHEN (
        NEW.snapshot->>'status' = 'in_progress'
        AND OLD.snapshot->>'status' = 'queued'
    )
    EXECUTE FUNCTION lgos_bench_mark_response('running');
CREATE OR REPLACE TRIGGER lgos_bench_first_event
    AFTER INSERT ON lgos_background_events
    FOR EACH ROW WHEN (NEW.seq = 0)
    EXECUTE FUNCTION lgos_bench_mark_event('first_event');
"""


def install(url: str) -> None:
    """The marks' table and triggers (after ``lgos db-setup``)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(_SQL)


def read(url: str) -> dict[str, dict[str, float]]:
    """Each Response's first stamp per stage, in Unix seconds."""
    marks: dict[str, dict[str, float]] = defaultdict(dict)
    with psycopg.connect(url, autocommit=True) as conn:
        rows: list[Any] = conn.execute(
            "SELECT response_id, stage, extract(epoch FROM min(at))::float8 "
            "FROM lgos_bench_marks GROUP BY response_id, stage"
        ).fetchall()
    for response_id, stage, at in rows:
        marks[response_id][stage] = at
    return dict(marks)
