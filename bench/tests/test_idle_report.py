"""The idle-stream report (offline: a run's figures are given; the run itself
starts real servers)."""

from __future__ import annotations

from typing import Any

from lgos_bench import idle_report


def _side(kib: float) -> dict[str, float]:
    return {
        "streams": 256.0,
        "rss_before_mib": 95.0,
        "rss_open_mib": 95.0 + kib * 256 / 1024,
        "kib_per_stream": kib,
    }


def _results(chat_kib: float, responses_kib: float) -> dict[str, Any]:
    idle = {
        api: {"baseline": _side(71.0), "lgos": _side(kib), "ratio": kib / 71.0}
        for api, kib in (("chat", chat_kib), ("responses", responses_kib))
    }
    meta = {
        "mode": "idle",
        "lgos_revision": "abc1234",
        "background_cores_before": 0.1,
        "started": "2026-12-03T08:00:00+0000",
        "placement": "server pinned to core(s) [0]",
        "streams": 256,
    }
    return {"meta": meta, "idle": idle, "targets": idle_report.evaluate_idle(idle)}


def test_each_api_is_judged_against_64_kib_per_stream() -> None:
    markdown = idle_report.render(_results(63.9, 71.8))

    assert (
        "| chat streaming: KiB of server RSS per idle open stream | <= 64 KiB "
        "| 63.9 | yes |" in markdown
    )
    assert (
        "| responses streaming: KiB of server RSS per idle open stream | <= 64 KiB "
        "| 71.8 | NO |" in markdown
    )
    assert "| 71.0 | 63.9 | 0.90× |" in markdown
