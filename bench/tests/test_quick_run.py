"""The quick mode end to end: both servers, every figure, every ratio.

No timing threshold is asserted: the numbers of a loaded CI machine mean
nothing; what must hold is that the run completes and the report is whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from lgos_bench.figures import FIGURES
from lgos_bench.workload import DEFAULT_TOKENS


def _check_figures(
    figures: dict[str, Any], *, stream: bool, is_ratio: bool = False
) -> None:
    for figure in FIGURES:
        value = figures[figure.key]
        if (figure.stream_only and not stream) or (is_ratio and not figure.ratioed):
            assert value is None, figure.key
        else:
            assert isinstance(value, float), figure.key


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("results")
    subprocess.run(
        [sys.executable, "-m", "lgos_bench", "--quick", "--out", str(out)],
        check=True,
        # A hang guard under pytest's 300 s: the run takes about a minute on
        # a quiet machine and three beside a load average of 14.
        timeout=280,
    )
    (data,) = out.glob("*-quick.json")
    (markdown,) = out.glob("*-quick.md")
    return json.loads(data.read_text()), markdown.read_text()


def test_quick_run_reports_every_figure_and_ratio(
    quick_run: tuple[dict[str, Any], str],
) -> None:
    results, markdown = quick_run
    assert "server pinned to core" in results["meta"]["placement"]
    assert all(row["equivalent"] for row in results["equivalence"])
    assert results["scenarios"]
    assert results["variants"]
    for row in results["scenarios"] + results["variants"]:
        for kind in ("baseline", "lgos", "ratio"):
            _check_figures(row[kind], stream=row["stream"], is_ratio=kind == "ratio")
        for kind in ("baseline", "lgos"):
            assert row[kind]["errors"] == 0
            assert row[kind]["requests"] > 0
        if row["stream"] and row["model"] == "bench-plain":
            assert row["lgos"]["deltas_per_req"] == DEFAULT_TOKENS
            assert row["baseline"]["deltas_per_req"] == DEFAULT_TOKENS
    for row in results["workers"]:
        for kind in ("lgos_x2", "vs_lgos_x1", "vs_baseline"):
            _check_figures(row[kind], stream=row["stream"], is_ratio=kind != "lgos_x2")
    for row in results["idle"].values():
        for kind in ("baseline", "lgos"):
            assert row[kind]["streams"] > 0
            assert isinstance(row[kind]["kib_per_stream"], float)
        assert "ratio" in row
    for path in ("astream", "ainvoke"):
        assert results["inprocess"][path]["cpu_ms_per_run"] > 0
    assert len(results["inprocess"]["apps"]) == 16  # 4 graphs x 2 APIs x 2 modes
    for row in results["inprocess"]["apps"].values():
        assert isinstance(row["ratio"], float)
    assert {row["what"] for row in results["extra_costs"]} == {
        "commentary (3 status events)",
        "citations (2)",
        "client tool call",
    }
    for row in results["extra_costs"]:
        assert isinstance(row["lgos_extra_ms"], float)
        assert isinstance(row["baseline_extra_ms"], float)
    cpu_targets = [t for t in results["targets"] if t["kind"] == "cpu"]
    assert len(cpu_targets) == 4
    assert all(isinstance(t["value"], float) for t in cpu_targets)
    for heading in (
        "## Targets",
        "## Main matrix",
        "## Variants",
        "## Extra cost",
        "## uvicorn workers",
        "## Memory per idle open stream",
        "## In-process ceiling",
        "app via ASGI, chat/json/plain",
        "**LGOS/baseline**",
    ):
        assert heading in markdown
    for figure in FIGURES:
        assert figure.label in markdown
