"""``lgos-bench idle``: memory per idle open stream alone, judged.

The full run measures it too (one phase among many); this runs only that
phase, for Chat Completions and Responses streams, on freshly started
servers, and judges LGOS against issue 39's 64 KiB per stream.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lgos_bench.idle import idle_phase
from lgos_bench.report import RESULTS_DIR, fmt, idle_table, write_pair
from lgos_bench.scenarios import APIS
from lgos_bench.servers import Placement
from lgos_bench.suite import run_meta, run_preamble
from lgos_bench.targets import evaluate_idle
from lgos_bench.workload import Workload

STREAMS = 256


def run(
    placement: Placement,
    workload: Workload,
    log: Callable[[str], None],
    *,
    streams: int = STREAMS,
) -> dict[str, Any]:
    meta = run_meta(
        "idle",
        placement=placement.describe(),
        streams=streams,
    )
    idle = idle_phase(workload, placement, APIS, streams, log)
    return {"meta": meta, "idle": idle, "targets": evaluate_idle(idle)}


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        "# lgos-bench: memory per idle open stream",
        "",
        run_preamble(meta)
        + f" {meta['placement']}. {meta['streams']} streams of a graph that "
        "waits, held open on a freshly started server after a short warm-up: "
        "the server's RSS with them open less before, per stream.",
        "",
        *idle_table(results["idle"]),
        "| target | limit | value | met |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t['target']} | {t['limit']} | {fmt(t['value'], 1)} | {fmt(t['met'])} |"
        for t in results["targets"]
    ]
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-idle.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
