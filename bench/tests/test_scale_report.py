"""The scale report (offline: a run's rounds are given; the run itself
needs PostgreSQL and real ``lgos`` processes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lgos_bench import scale_report
from lgos_bench.background import summarize_ms
from lgos_bench.scale_report import Run, Steady, steady, throughput


def _slots(count: int, cycle: float, runs_each: int, node: float = 1.0) -> list[Run]:
    """``count`` slots each running ``runs_each`` runs back to back, a run
    every ``cycle`` seconds, slot ``n`` starting ``0.3 * n`` s late."""
    return [
        Run(1, 0.0, 0.0, start, start + node)
        for slot in range(count)
        for start in (0.3 * slot + cycle * index for index in range(runs_each))
    ]


def test_steady_throughput_is_slots_times_occupancy_over_the_node_time():
    # A slot runs 1 s inside the node, then spends 0.25 s on the next run.
    window = steady(_slots(4, cycle=1.25, runs_each=8), slots=4)

    assert window is not None
    figures = throughput([window], slots=4)
    assert figures["runs_per_s"] == pytest.approx(4 / 1.25, rel=0.03)
    assert figures["overhead_ms"] == pytest.approx(250, rel=0.1)
    assert figures["node_ms"] == pytest.approx(1000)


def test_one_wave_has_no_steady_window():
    assert steady(_slots(4, cycle=1.0, runs_each=1), slots=4) is None


def test_rounds_pool_by_their_windows():
    short = Steady(runs=10, window_s=2.0, busy_s=6.0, node_s=1.0)  # 0.75 busy
    long = Steady(runs=30, window_s=6.0, busy_s=22.0, node_s=1.0)  # 0.92 busy

    pooled = throughput([short, long], slots=4)

    assert pooled["occupancy"] == pytest.approx(28 / 32)
    assert pooled["runs_per_s"] == pytest.approx(4 * 28 / 32)


def _round(workers: int, busy_share: float) -> dict[str, Any]:
    slots = workers * 4
    return {
        "workers": workers,
        "runs": slots * 8,
        "window_s": 7.0,
        "busy_s": busy_share * slots * 7.0,
        "node_s": 1.0,
        "worker_cpu_ms_per_run": 20.0,
        "postgres_cpu_ms_per_run": 5.0,
        "other_cores": 1.5,
        "own_cores": 0.3,
    }


def _results(shares: dict[int, float]) -> dict[str, Any]:
    rounds = [_round(workers, share) for workers, share in shares.items()]
    foreground_rounds = [
        {
            "apis": apis,
            "requests": 600,
            "errors": 0,
            "elapsed_s": 10.0,
            "latencies_ms": [20.0, 40.0],
            "server_cpu_s": 3.0,
            "client_cpu_s": 0.6,
            "other_cores": 1.2,
        }
        for apis in (1, 2)
    ]
    return {
        "meta": {
            "mode": "scale",
            "lgos_revision": "abc1234",
            "cores": 2,
            "background_cores_before": 1.5,
            "background_cores_after": 1.6,
            "load_average_before": 9.0,
            "load_average_after": 10.0,
            "started": "2026-12-02T22:00:00+0000",
            "plan": {
                "wait": 1.0,
                "concurrency": 4,
                "workers": 4,
                "worker_order": [1, 2, 4],
                "waves": 8,
                "queue_seconds": 30.0,
                "api_order": [1, 2],
                "foreground_concurrency": 16,
                "foreground_seconds": 10.0,
            },
        },
        "background_rounds": rounds,
        "background": scale_report.background_summary(rounds, 1.0, 4),
        "queue": {
            "workers": 2,
            "arrival_per_s": 4.0,
            "runs": 120,
            "wait_ms": summarize_ms([0.010, 0.020, 0.030]),
            "accepted_ms": summarize_ms([0.004, 0.005, 0.006]),
            "other_cores": 1.4,
        },
        "foreground": scale_report.foreground_summary(foreground_rounds),
    }


def test_the_report_says_whether_four_workers_scale_linearly(tmp_path: Path):
    results = _results({1: 0.9, 2: 0.88, 4: 0.85})

    markdown, data = scale_report.write(results, tmp_path)

    assert markdown.name.endswith("-scale.md")
    assert json.loads(data.read_text()) == results
    text = markdown.read_text()
    # 4 workers: 16 slots x 0.85 = 13.6 runs/s, 13.6 / (4 x 3.6) = 0.94.
    assert "| 4 | 128 | 13.60 (13.60–13.60) | 0.94 | 16.00 | 0.85 | 176 |" in text
    assert "0.9 of linear (1 worker × N) up to 4 workers: met" in text
    assert "| submit → node started | 20.0 | 29.8 | 20.0 | 10.0 | 30.0 |" in text
    assert "| 2 | 600 | 60.0 | 30.0 | 39.8 | 5.00 | 1.00 | 0 | 1.20 |" in text


def test_a_fleet_that_does_not_scale_misses_the_target(tmp_path: Path):
    markdown, _ = scale_report.write(_results({1: 0.9, 2: 0.9, 4: 0.7}), tmp_path)

    assert "up to 4 workers: MISSED" in markdown.read_text()
