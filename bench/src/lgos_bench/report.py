"""The run's results as a markdown report and a JSON file under ``results/``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from lgos_bench.figures import FIGURES, Figures
from lgos_bench.scenarios import TARGET_CONCURRENCY

RESULTS_DIR = Path(__file__).resolve().parents[2] / "results"
NOISY_CORES = 0.1
_HEADER = ["scenario", "server", *(figure.label for figure in FIGURES)]


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return [*lines, ""]


def _figure_cells(figures: Figures, *, ratio: bool = False) -> list[str]:
    cells = []
    for figure in FIGURES:
        value = figures.get(figure.key)
        cells.append(f"{fmt(value)}×" if ratio and value is not None else fmt(value))
    return cells


def _matrix(rows: list[dict[str, Any]]) -> list[str]:
    body = []
    for row in rows:
        body.append([row["key"], "baseline", *_figure_cells(row["baseline"])])
        body.append(["", "LGOS", *_figure_cells(row["lgos"])])
        body.append(["", "**LGOS/baseline**", *_figure_cells(row["ratio"], ratio=True)])
    return _table(_HEADER, body)


def _workers(rows: list[dict[str, Any]]) -> list[str]:
    body = []
    for row in rows:
        body.append([row["key"], "LGOS 2 workers", *_figure_cells(row["lgos_x2"])])
        body.append(["", "x2 / LGOS x1", *_figure_cells(row["vs_lgos_x1"], ratio=True)])
        body.append(
            ["", "x2 / baseline", *_figure_cells(row["vs_baseline"], ratio=True)]
        )
    return _table(_HEADER, body)


def idle_table(idle: dict[str, Any]) -> list[str]:
    rows = []
    for api, row in idle.items():
        base, lgos = row["baseline"], row["lgos"]
        rows.append(
            [
                api,
                fmt(base["streams"], 0),
                f"{fmt(base['rss_before_mib'])} → {fmt(base['rss_open_mib'])}",
                f"{fmt(lgos['rss_before_mib'])} → {fmt(lgos['rss_open_mib'])}",
                fmt(base["kib_per_stream"], 1),
                fmt(lgos["kib_per_stream"], 1),
                f"{fmt(row['ratio'])}×" if row["ratio"] is not None else "–",
            ]
        )
    header = [
        "API (streaming)",
        "streams",
        "baseline RSS MiB idle → open",
        "LGOS RSS MiB idle → open",
        "baseline KiB/stream",
        "LGOS KiB/stream",
        "LGOS/baseline",
    ]
    return _table(header, rows)


def _inprocess(results: dict[str, Any]) -> list[str]:
    c8 = {
        (row["api"], row["stream"]): row
        for row in results["scenarios"]
        if row["concurrency"] == TARGET_CONCURRENCY
    }
    rows = []
    for path, stream in (("astream", True), ("ainvoke", False)):
        figures = results["inprocess"][path]
        cpu = figures["cpu_ms_per_run"]
        shares = []
        for api in ("chat", "responses"):
            row = c8.get((api, stream))
            for kind in ("baseline", "lgos"):
                server_cpu = row[kind]["cpu_ms_per_req"] if row else None
                shares.append(
                    fmt(100 * cpu / server_cpu, 0) + "%" if server_cpu else "–"
                )
        rows.append(
            [
                f"graph.{path}",
                fmt(figures["runs_per_s"], 1),
                fmt(cpu),
                fmt(figures["wall_ms_per_run"]),
                *shares,
            ]
        )
    header = [
        "path",
        "runs/s",
        "CPU ms/run",
        "wall ms/run",
        "of chat baseline CPU/req",
        "of chat LGOS",
        "of responses baseline",
        "of responses LGOS",
    ]
    return _table(header, rows) + _apps(results["inprocess"]["apps"])


def _apps(apps: dict[str, Any]) -> list[str]:
    rows = [
        [
            f"app via ASGI, {key}",
            fmt(row["baseline"]["cpu_ms_per_run"]),
            fmt(row["lgos"]["cpu_ms_per_run"]),
            f"{row['ratio']:.3f}×",
            f"{row['spread']['ci_low']:.3f}–{row['spread']['ci_high']:.3f}",
            fmt(row["lgos"]["cpu_ms_per_run"] - row["baseline"]["cpu_ms_per_run"]),
        ]
        for key, row in apps.items()
        if key.endswith("/plain")
    ]
    header = [
        "no sockets, no client (plain graph)",
        "baseline CPU ms/req",
        "LGOS CPU ms/req",
        "LGOS/baseline",
        "95% CI",
        "LGOS extra ms/req",
    ]
    return _table(header, rows)


def _noise_warning(meta: dict[str, Any]) -> list[str]:
    busy = meta["background_cores_before"]
    if busy < NOISY_CORES:
        return []
    return [
        f"> **Noisy machine:** other processes kept {busy:.2f} cores busy before "
        "the run started (see 'other procs busy %' per scenario); figures are "
        "less reliable than on a quiet machine.",
        "",
    ]


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        f"# LGOS bench: {meta['mode']} run, {meta['started']}",
        "",
        f"- CPU placement: {meta['placement']}",
        f"- workload: {meta['tokens']} streamed tokens per answer, no sleeping, "
        "usage reported; uvicorn " + meta["uvicorn"],
        f"- python {meta['python']}, fastapi {meta['fastapi']}, "
        f"langgraph {meta['langgraph']}; CPU from /proc/<pid>/stat "
        f"(utime+stime, {meta['clock_ticks_per_s']} ticks/s) of the server tree",
        f"- LGOS revision {meta['lgos_revision']}; each scenario in "
        f"{meta['plan']['rounds']} alternating baseline/LGOS round(s)",
        "- ratios are LGOS / baseline from this run (for req/s and deltas/s "
        "higher is better; for everything else lower is better)",
        "",
        *_noise_warning(meta),
        "## Targets",
        "",
    ]
    lines += _table(
        ["target", "limit", "value", "met"],
        [
            [t["target"], t["limit"], fmt(t["value"]), fmt(t["met"])]
            for t in results["targets"]
        ],
    )
    lines += ["## Main matrix: plain graph", "", *_matrix(results["scenarios"])]
    lines += [f"## Variants at concurrency {TARGET_CONCURRENCY}", ""]
    lines += _matrix(results["variants"])
    lines += ["## Extra cost of commentary, citations and a tool call", ""]
    lines += [
        "Server CPU a variant adds over the plain graph, measured in process "
        "(both ASGI apps, no sockets, interleaved); the last column is the "
        f"LGOS/baseline CPU ratio over HTTP at concurrency {TARGET_CONCURRENCY}.",
        "",
    ]
    lines += _table(
        [
            "what",
            "case",
            "baseline extra ms/req",
            "LGOS extra ms/req",
            "LGOS extra % of its plain",
            "LGOS − baseline extra ms",
            "LGOS/baseline in process",
            "LGOS/baseline over HTTP",
        ],
        [
            [
                row["what"],
                row["key"],
                fmt(row["baseline_extra_ms"], 3),
                fmt(row["lgos_extra_ms"], 3),
                fmt(row["lgos_extra_pct_of_plain"], 0) + "%",
                fmt(row["lgos_over_baseline_extra_ms"], 3),
                f"{fmt(row['cpu_ratio_in_process'])}×",
                f"{fmt(row['cpu_ratio_over_http'])}×"
                if row["cpu_ratio_over_http"] is not None
                else "–",
            ]
            for row in results["extra_costs"]
        ],
    )
    lines += ["## uvicorn workers: LGOS with 2 workers", ""]
    lines += [
        "Both workers share the server core(s) above, so a second worker can "
        "only add scheduling and memory cost here, not throughput.",
        "",
        *_workers(results["workers"]),
    ]
    lines += ["## Memory per idle open stream (fresh servers)", ""]
    lines += idle_table(results["idle"])
    lines += ["## In-process ceiling (no HTTP, load-generator core)", ""]
    lines += _inprocess(results)
    lines += ["## Equivalence of the two servers' answers", ""]
    lines += _table(
        ["case", "baseline bytes", "LGOS bytes", "equivalent"],
        [
            [
                row["case"],
                str(row["baseline_bytes"]),
                str(row["lgos_bytes"]),
                fmt(row["equivalent"]),
            ]
            for row in results["equivalence"]
        ],
    )
    if results.get("profiles"):
        lines += ["## Profiles of LGOS where it missed a target", ""]
        for profile in results["profiles"]:
            lines += [profile["markdown"], ""]
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-<mode>.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)


def write_pair(
    results: dict[str, Any], markdown_text: str, directory: Path
) -> tuple[Path, Path]:
    """``markdown_text`` and ``results`` as ``<timestamp>-<mode>.md`` and
    ``.json`` in ``directory`` (every mode's report is written this way)."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = time.strftime("%Y%m%d-%H%M%S") + f"-{results['meta']['mode']}"
    markdown, data = directory / f"{stem}.md", directory / f"{stem}.json"
    markdown.write_text(markdown_text + "\n")
    data.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return markdown, data
