"""The background-latency report (offline: the figures of a run are given,
the run itself needs PostgreSQL and real ``lgos`` processes)."""

from __future__ import annotations

import json
from pathlib import Path

from lgos_bench import background
from lgos_bench.background import Timing


def test_latencies_are_summarised_in_milliseconds_with_p50_and_p99() -> None:
    seconds = [index / 1000 for index in range(1, 101)]  # 1 ms .. 100 ms

    summary = background.summarize_ms(seconds)

    assert summary["p50"] == 50.5
    assert summary["p99"] == 99.01
    assert summary["mean"] == 50.5
    assert (summary["min"], summary["max"]) == (1.0, 100.0)


def test_no_latencies_give_no_figures() -> None:
    assert set(background.summarize_ms([]).values()) == {None}


def test_the_first_event_is_split_into_the_spans_the_database_stamped() -> None:
    timing = Timing("resp_1", 100.000, 100.004, 100.030, 100.050, 0.0)
    marks = {
        "resp_1": {
            "stored": 100.003,
            "picked": 100.010,
            "attempt": 100.012,
            "running": 100.015,
            "first_event": 100.025,
        }
    }
    # A submission whose marks are missing counts only in the spans it has.
    unmarked = Timing("resp_2", 200.0, 200.1, 200.2, 200.3, 0.0)

    spans = {
        row["span"]: row["ms"] for row in background.stages([timing, unmarked], marks)
    }

    expected = {
        "submit → stored": 3.0,
        "stored → picked by a worker": 7.0,
        "picked → attempt counted": 2.0,
        "attempt → in_progress stored": 3.0,
        "in_progress → first event stored": 10.0,
        "first event stored → on the follower": 5.0,
    }
    assert list(spans) == list(expected)
    for span, ms in expected.items():
        assert abs((spans[span]["p50"] or 0.0) - ms) < 1e-6, span


def test_the_report_is_written_as_markdown_and_json(tmp_path: Path) -> None:
    figures = {
        "requests": 3,
        "warmup": 1,
        "tokens": background.BENCH_TOKENS,
        "rate": 10.0,
        "apis": 2,
        "workers": 1,
        "errors": [],
        "first_event_ms": background.summarize_ms([0.010, 0.020, 0.070]),
        "last_event_ms": background.summarize_ms([0.040, 0.050, 0.060]),
        "accepted_ms": background.summarize_ms([0.002, 0.003, 0.004]),
        "late_ms": background.summarize_ms([0.0, 0.0, 0.001]),
        "stages": background.stages([], {}),
    }
    results = {
        "meta": {
            "mode": "background",
            "lgos_revision": "abc1234",
            "background_cores_before": 0.1,
            "started": "2026-12-01T18:00:00+0000",
        },
        "background": figures,
    }

    markdown, data = background.write(results, tmp_path)

    assert markdown.name.endswith("-background.md")
    assert json.loads(data.read_text()) == results
    text = markdown.read_text()
    assert "| submit → first event on the other process | 20.0 | 69.0 |" in text
    assert "| submit → last event | 50.0 | 59.8 | 50.0 | 40.0 | 60.0 |" in text
    assert "| stored → picked by a worker | – |" in text
    assert "other process, p50 | <= 20 ms | 20.0 | yes |" in text
    assert "other process, p99 | <= 60 ms | 69.0 | NO |" in text
    assert "LGOS abc1234" in text
