"""The background-latency report (offline: the figures of a run are given,
the run itself needs PostgreSQL and real ``lgos`` processes)."""

from __future__ import annotations

import json
from pathlib import Path

from lgos_bench import background


def test_latencies_are_summarised_in_milliseconds_with_p50_and_p99() -> None:
    seconds = [index / 1000 for index in range(1, 101)]  # 1 ms .. 100 ms

    summary = background.summarize_ms(seconds)

    assert summary["p50"] == 50.5
    assert summary["p99"] == 99.01
    assert summary["mean"] == 50.5
    assert (summary["min"], summary["max"]) == (1.0, 100.0)


def test_no_latencies_give_no_figures() -> None:
    assert set(background.summarize_ms([]).values()) == {None}


def test_the_report_is_written_as_markdown_and_json(tmp_path: Path) -> None:
    figures = {
        "requests": 3,
        "warmup": 1,
        "tokens": background.BENCH_TOKENS,
        "errors": [],
        "first_event_ms": background.summarize_ms([0.010, 0.020, 0.030]),
        "last_event_ms": background.summarize_ms([0.040, 0.050, 0.060]),
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
    assert "| submit → first event | 20.0 | 29.8 | 20.0 | 10.0 | 30.0 |" in text
    assert "| submit → last event | 50.0 | 59.8 | 50.0 | 40.0 | 60.0 |" in text
    assert "LGOS abc1234" in text
