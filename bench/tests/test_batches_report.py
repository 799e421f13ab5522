"""The batch bench's report (offline: the figures of a run are given; the
run itself needs PostgreSQL, SeaweedFS, the Files API and real workers)."""

from __future__ import annotations

import json
from pathlib import Path

from lgos_bench import batches


def _run(workers: int, rss: list[tuple[int, int, int]]) -> dict[str, object]:
    return {
        "workers": workers,
        "status": "completed",
        "request_counts": {"total": 100, "completed": 100, "failed": 0},
        "validate_s": 0.5,
        "run_s": 2.0,
        "finalize_s": 0.25,
        "total_s": 2.75,
        "lines_per_s_run": 50.0,
        "lines_per_s_total": 100 / 2.75,
        "worker_rss_kib": [
            {"before": b * 1024, "after": a * 1024, "peak": p * 1024} for b, a, p in rss
        ],
    }


def test_the_report_gives_lines_per_second_and_worker_memory(tmp_path: Path) -> None:
    results = {
        "meta": {
            "mode": "batches",
            "lgos_revision": "abc1234",
            "background_cores_before": 0.1,
            "started": "2026-12-02T18:00:00+0000",
        },
        "batches": {
            "lines": 100,
            "warmup_lines": 10,
            "tokens": 8,
            "runs": [
                _run(1, [(120, 121, 125)]),
                _run(2, [(121, 121, 125), (118, 119, 120)]),
            ],
        },
    }

    markdown, data = batches.write(results, tmp_path)

    assert markdown.name.endswith("-batches.md")
    assert json.loads(data.read_text()) == results
    text = markdown.read_text()
    row = "| 1 | completed | 0.5 | 2.0 | 0.2 | 2.8 | 50 | 36 | 120 → 121 (125) |"
    assert row in text
    assert "| 2 | completed |" in text
    assert "121 → 121 (125), 118 → 119 (120)" in text
    assert "warm-up batch of 10 lines" in text


def test_the_input_file_holds_one_request_per_line() -> None:
    lines = batches.input_file(3).decode().splitlines()

    assert [json.loads(line)["custom_id"] for line in lines] == [
        "line-0",
        "line-1",
        "line-2",
    ]
    assert {json.loads(line)["url"] for line in lines} == {"/v1/responses"}
