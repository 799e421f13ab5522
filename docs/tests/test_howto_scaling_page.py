"""The fleet page and the Kubernetes page quote the scale run they name,
figure for figure, and describe the fleet suite as the project runs it."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

from lgos_testkit.haproxy import haproxy

ROOT = Path(__file__).resolve().parents[2]
HOW_TO = ROOT / "docs" / "how-to"
# Whitespace folded: a quoted phrase may break across lines.
FLEET_PAGE = " ".join((HOW_TO / "scaling.md").read_text().split())
KUBERNETES_PAGE = " ".join((HOW_TO / "kubernetes.md").read_text().split())
SUITE = ROOT / "packages" / "langgraph-openai-serve" / "tests"


def named_run(page: str) -> dict[str, Any]:
    (run,) = set(re.findall(r"`bench/results/([0-9-]+-scale)`", page))
    return json.loads((ROOT / "bench" / "results" / f"{run}.json").read_text())


def test_the_fleet_page_quotes_the_named_scale_run():
    report = named_run(FLEET_PAGE)

    assert f"LGOS `{report['meta']['lgos_revision']}`" in FLEET_PAGE
    for row in report["background"]:
        quoted = (
            f"| {row['workers']} | {row['runs_per_s']:.2f} | "
            f"{row['of_one_worker_x_n']:.2f} | {row['of_ideal']:.2f} | "
            f"{row['overhead_ms']:.0f} ms | {row['other_cores']:.2f} |"
        )
        assert quoted in FLEET_PAGE, quoted
    by_workers = {row["workers"]: row for row in report["background"]}
    overheads = sorted(round(row["overhead_ms"]) for row in report["background"])
    assert f"{overheads[0]}–{overheads[-1]} ms per run" in FLEET_PAGE
    cpu = [row["worker_cpu_ms_per_run"] for row in by_workers.values()]
    assert f"{min(cpu):.0f}–{max(cpu):.0f} ms of the worker's CPU" in FLEET_PAGE
    cpu = [row["postgres_cpu_ms_per_run"] for row in by_workers.values()]
    assert f"{min(cpu):.0f}–{max(cpu):.0f} ms of PostgreSQL's per run" in FLEET_PAGE
    wait = report["queue"]["wait_ms"]
    assert f"p50 {wait['p50']:.0f} ms, p99 {wait['p99']:.0f} ms" in FLEET_PAGE
    assert f"{report['queue']['arrival_per_s']:g} runs a second" in FLEET_PAGE
    for row in report["foreground"]:
        assert f"{row['rps']:.1f} req/s with {row['apis']}" in FLEET_PAGE


def test_the_kubernetes_page_quotes_the_same_run():
    report = named_run(KUBERNETES_PAGE)

    assert named_run(FLEET_PAGE) == report
    rates = " / ".join(f"{row['runs_per_s']:.1f}" for row in report["background"])
    assert f"| {rates} runs/s |" in KUBERNETES_PAGE
    wait = report["queue"]["wait_ms"]
    assert f"| {wait['p50']:.0f} ms / {wait['p99']:.0f} ms |" in KUBERNETES_PAGE
    foreground = " / ".join(f"{row['rps']:.1f}" for row in report["foreground"])
    assert f"| {foreground} req/s |" in KUBERNETES_PAGE


def test_the_fleet_suite_is_described_as_it_runs():
    fleet = (SUITE / "fleet.py").read_text()
    test = (SUITE / "test_fleet.py").read_text()
    stack = (SUITE / "background_stack.py").read_text()

    (drain,) = re.findall(r"^DRAIN_DELAY = ([0-9.]+)$", fleet, re.M)
    assert f"`LGOS_DRAIN_DELAY={float(drain):g}`" in FLEET_PAGE
    assert "api_count=3, worker_count=2" in test
    assert "three `lgos serve` and two `lgos worker`" in FLEET_PAGE
    interval = inspect.signature(haproxy).parameters["check_interval"].default
    assert f"`/health/ready` every {interval:g} s" in FLEET_PAGE
    (stalled,) = re.findall(r'"LGOS_WORKER_STALLED_TIMEOUT": "([0-9.]+)"', stack)
    assert f"with a {stalled} s stalled timeout" in FLEET_PAGE
