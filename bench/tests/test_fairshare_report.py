"""The fairshare bench's figures and report, offline: the worker's
histogram read as Prometheus reads it, and issue 46's targets judged from
given figures (the run itself is ``test_fairshare_run.py``)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from lgos_bench import fairshare_report
from lgos_bench.batches import BatchEnd
from lgos_bench.fairshare_load import Sample


def test_a_quantile_is_interpolated_in_its_bucket() -> None:
    buckets = {0.1: 2.0, 1.0: 6.0, 10.0: 10.0, math.inf: 10.0}

    assert fairshare_report.bucket_quantile(buckets, 0.5) == pytest.approx(0.775)
    assert fairshare_report.bucket_quantile(buckets, 0.9) == pytest.approx(7.75)
    assert fairshare_report.bucket_quantile({math.inf: 0.0}, 0.5) is None


def test_the_worker_wait_counts_only_the_runs_of_the_stretch() -> None:
    before = {1.0: 5.0, 10.0: 5.0, math.inf: 5.0}
    after = {1.0: 5.0, 10.0: 9.0, math.inf: 9.0}

    wait = fairshare_report.worker_wait(before, after)

    assert wait["runs"] == 4
    assert wait["p50_ms"] == pytest.approx(5500.0)


def test_a_run_waits_from_its_submission_to_its_node_start() -> None:
    samples = [
        Sample("resp_1", 100.0, "completed", 100.05),
        Sample("resp_2", 101.5, "completed", 101.6),
        Sample(None, 103.0, "refused 429"),
    ]

    figures = fairshare_report.interactive(samples)

    assert figures["completed"] == 2
    assert figures["statuses"] == {"completed": 2, "refused 429": 1}
    assert figures["wait_ms"]["p50"] == pytest.approx(75.0)


def _batch(tenant: str, lines: int, total: float, validating: float) -> dict[str, Any]:
    seen = {"validating": 10.0, "in_progress": 10.0 + validating}
    seen["completed"] = 10.0 + total
    end = BatchEnd("batch_1", "completed", {"total": lines}, 10.0, seen)
    return fairshare_report.batch_record(end, tenant, lines, 10.0)


def _waits(p50_ms: float) -> dict[str, Any]:
    wait_ms = {"p50": p50_ms, "p90": p50_ms, "max": p50_ms}
    runs = {"completed": 10, "submitted": 10, "wait_ms": wait_ms}
    worker = {"runs": 10, "p50_ms": p50_ms, "p90_ms": p50_ms}
    return {"interactive": runs, "worker_wait": worker, "batches": []}


def _answers(statuses: list[int], ms: float, code: str | None) -> list[dict[str, Any]]:
    return [
        {"status": s, "seconds": ms / 1000, "code": code, "retry_after": "1"}
        for s in statuses
    ]


def _measured(refused: int) -> dict[str, Any]:
    accepted = 24 - refused
    loaded = _answers([200] * accepted, 300.0, None)
    loaded += _answers([503] * refused, 20.0, "server_overloaded")
    return {
        "exits": [],
        "waits": {
            "idle": _waits(50.0),
            "one_batch": _waits(300.0),
            "two_batches": _waits(400.0),
        },
        "small": {
            "alone": _batch("C", 4, 4.2, 0.2),
            "beside": {
                "small": _batch("C", 4, 26.5, 22.4),
                "bulk": _batch("A", 120, 46, 0.2),
            },
        },
        "bulk": {
            "alone": _batch("A", 120, 45.0, 0.2),
            "beside": {
                "bulk": _batch("A", 120, 49.5, 0.2),
                "small": _batch("C", 4, 7.5, 1.1),
                "interactive": _waits(160.0)["interactive"],
            },
        },
        "burst": {
            "max_runs": 8,
            "unloaded": _answers([200] * 8, 200.0, None),
            "loaded": loaded,
        },
    }


def _meta() -> dict[str, Any]:
    plan = {"wait_s": 1.0, "lines": 120, "small_lines": 4, "every": 1.5}
    plan.update(samples=10, burst_rounds=1, burst_tokens=128)
    plan.update(settle_s=2.0, small_after_s=3.0)
    return {
        "mode": "fairshare",
        "lgos_revision": "abc1234",
        "lgos_core_commit": "abc1234",
        "lgos_python": "this interpreter",
        "started": "2026-12-04T15:00:00+0000",
        "background_cores_before": 0.1,
        "background_cores_after": 0.1,
        "load_average_before": 0.5,
        "wall_seconds": 400.0,
        "plan": plan,
        "settings": {"LGOS_MAX_RUNS": "8"},
    }


def test_the_targets_are_judged_as_the_issue_states_them(tmp_path: Path) -> None:
    results = fairshare_report.results(_meta(), _measured(refused=16))

    met = {t["target"]: t["met"] for t in results["targets"]}
    assert met == {
        "B's p50 wait beside one batch of A": True,
        "B's p50 wait beside two batches of A": False,
        "C's 4-line batch beside A's: total": False,
        "A's batch beside B's and C's work / alone": True,
        "burst: slowest refused answer": True,
        "burst: accepted p99 / unloaded p99": True,
    }
    markdown, data = fairshare_report.write(results, tmp_path)
    assert markdown.name.endswith("-fairshare.md")
    assert json.loads(data.read_text()) == results
    text = markdown.read_text()
    assert "| B's p50 wait beside two batches of A | <= 2 x idle p50 + 250 ms " in text
    assert "| C beside A's | completed 0/4 | 26.5 | 22.4 |" in text
    assert "503 server_overloaded: 16" in text


def test_a_burst_nothing_refused_misses_the_refusal_target() -> None:
    results = fairshare_report.results(_meta(), _measured(refused=0))

    (refusal,) = [t for t in results["targets"] if "refused" in t["target"]]
    assert refusal["met"] is False
    assert refusal["value"] is None
