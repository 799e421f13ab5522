"""The outage report's figures (offline: the clients' records are given; a
run needs a fleet and a PostgreSQL to break, ``test_outage_run.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from lgos_bench import outage_logs, outage_report
from lgos_bench.outage_load import Answer, Ending, Probe, Records, Submission
from lgos_bench.outage_report import Phase

PHASE = Phase("refuse", 100.0, 110.0, 125.0, 150.0, 128.0, True)


def test_records_are_cut_into_the_phase_by_its_events() -> None:
    records = Records(
        answers=[
            Answer("submit", 99.0, 0.01, 200),  # before the phase
            Answer("submit", 105.0, 0.01, 200),  # steady: not during the fault
            Answer("submit", 109.0, 5.0, 503, "database_unavailable"),  # under way
            Answer("submit", 120.0, 0.5, 500, "server_error"),
            Answer("foreground", 124.0, 2.0, None, "ReadTimeout"),
        ],
        submissions=[
            Submission("a", 105.0, 1, 105.01, "resp_a"),
            Submission("b", 109.0, 3, 126.0, "resp_b"),
            Submission("c", 120.0, 9, None, None),
        ],
    )
    endings = {
        "resp_a": Ending("resp_a", "completed"),
        "resp_b": Ending("resp_b", "failed", "server_error: boom"),
    }

    figures = outage_report.summarize(PHASE, records, endings, origin=100.0)

    runs = figures["runs"]
    assert (runs["submitted"], runs["accepted"], runs["never_accepted"]) == (3, 2, 1)
    assert (runs["completed"], runs["failed"], runs["not_ended"]) == (1, 1, 0)
    assert runs["failures"] == {"server_error: boom": 1}
    assert runs["longest_wait_to_accept_s"] == 17.0
    submissions = figures["submissions"]
    assert submissions["answers"] == 3
    assert submissions["buckets"]["503"] == 1
    assert submissions["buckets"]["500"] == 1
    assert submissions["during_fault"]["answers"] == 2
    assert submissions["during_fault"]["longest_s"] == 5.0
    assert figures["foreground"]["transport_errors"] == {"ReadTimeout": 1}
    assert figures["first_new_run_completed_s"] == 3.0


def test_readiness_is_timed_by_when_probes_were_answered() -> None:
    probes = [
        Probe("api", 109.0, 0.01, 200),
        Probe("api", 110.1, 0.8, 503, "postgres: no answer within 0.8 s"),
        Probe("api", 124.8, 0.7, 200),  # sent before the end, answered after
        Probe("worker 0", 110.2, 0.1, None, "ReadTimeout"),
        Probe("worker 0", 126.0, 0.1, 200),
        Probe("worker 1", 111.0, 0.1, 200),
    ]

    figures = outage_report.summarize(PHASE, Records(probes=probes), {}, 100.0)

    api, workers = figures["readiness"]["api"], figures["readiness"]["workers"]
    assert api["not_ready_after_s"] == 0.9
    assert api["ready_again_after_s"] == 0.5
    assert api["targets"]["api"]["reasons"] == {"postgres: no answer within 0.8 s": 1}
    assert workers["not_ready_after_s"] == 0.3
    assert workers["ready_again_after_s"] == 1.1
    assert workers["all_back"]


def test_a_logged_traceback_names_its_exception_where_it_was_raised_and_its_cause(
    tmp_path: Path,
) -> None:
    traceback = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/x/site-packages/psycopg/cursor_async.py", line 117, in execute',
            "    raise ex.with_traceback(None)",
            "psycopg.errors.AdminShutdown: terminating connection",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "/w/src/langgraph_openai_serve/store.py", line 40, in save',
            "    await cursor.execute(query)",
            "procrastinate.exceptions.ConnectorException: ",
            "    Database error.",
        ]
    )
    record = {
        "ts": "2026-12-04T04:25:29.104Z",
        "level": "error",
        "logger": "langgraph_openai_serve",
        "message": "request.failed",
        "exception": traceback,
    }
    log = tmp_path / "serve-0.log"
    log.write_text(json.dumps(record) + "\n" + '{"level": "info", "message": "x"}\n')

    (row,) = outage_logs.summarize([log], lambda at: "reset")

    assert row["process"] == "serve"
    assert row["event"] == "request.failed"
    assert row["exception"] == "procrastinate.exceptions.ConnectorException"
    assert row["raised_at"] == "langgraph_openai_serve/store.py:40 in save"
    assert row["first_cause"] == "psycopg.errors.AdminShutdown"
    assert row["says"] == "terminating connection"
    assert row["phases"] == {"reset": 1}
