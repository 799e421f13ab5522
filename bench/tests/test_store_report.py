"""The store-cost report (offline: the figures of a run are given; the run
itself needs PostgreSQL and two real servers)."""

from __future__ import annotations

import json
from pathlib import Path

from lgos_bench import store


def _figures(rps: float, cpu: float) -> dict[str, float | None]:
    return {"rps": rps, "cpu_ms_per_req": cpu, "errors": 0.0, "requests": 100.0}


def _results(json_ratio: float) -> dict:
    rows = [
        {
            "key": "responses/json/plain/c8",
            "stream": False,
            "off": _figures(200.0, 4.0),
            "on": _figures(180.0, 4.0 * json_ratio),
            "cpu_ratio": json_ratio,
            "rps_ratio": 0.9,
            "postgres_cpu_ms_per_req": 0.5,
        },
        {
            "key": "responses/stream/plain/c8",
            "stream": True,
            "off": _figures(80.0, 10.0),
            "on": _figures(79.0, 10.5),
            "cpu_ratio": 1.05,
            "rps_ratio": 0.99,
            "postgres_cpu_ms_per_req": 0.6,
        },
    ]
    meta = {
        "mode": "store",
        "lgos_revision": "abc1234",
        "background_cores_before": 0.1,
        "started": "2026-12-02T01:00:00+0000",
        "placement": "server pinned to core(s) [0]",
        "tokens": 64,
        "rounds": 4,
        "seconds": 16.0,
    }
    return {"meta": meta, "store": rows}


def test_streamed_and_non_streamed_ratios_are_judged_against_five_percent() -> None:
    met = store.render(_results(1.04))
    missed = store.render(_results(1.10))

    assert (
        "| responses/json/plain/c8 | 200.0 | 180.0 | 4.00 | 4.16 | 1.04× | 0.50 |"
        in met
    )
    assert (
        "json/plain/c8: server CPU/request, store on / off | <= 1.05x | 1.04 | yes |"
        in met
    )
    assert (
        "json/plain/c8: server CPU/request, store on / off | <= 1.05x | 1.10 | NO |"
        in missed
    )
    assert (
        "stream/plain/c8: server CPU/request, store on / off | <= 1.05x | 1.05 | yes |"
        in met
    )


def test_the_report_is_written_as_markdown_and_json(tmp_path: Path) -> None:
    results = _results(1.10)

    markdown, data = store.write(results, tmp_path)

    assert markdown.name.endswith("-store.md")
    assert json.loads(data.read_text()) == results
    assert "LGOS abc1234" in markdown.read_text()
