"""The issue's targets, and what commentary, citations and tool calls add.

Targets (LGOS against the baseline of the same run):
- server CPU per request at concurrency 8: streaming <= 1.3x, non-streaming <= 1.2x;
- time to first text delta (p50) at concurrency 1: within 2 ms of the baseline;
- in process (``alternate.py``: no sockets, both apps alternated request by
  request), non-streamed CPU per request <= 1.10x;
- against the same-work baseline (usage over every model call, issue 48),
  in process and in instructions: non-streamed <= 1.05x, streamed <= 1.0x;
- kept Responses (``LGOS_RESPONSE_STORE=postgres``) against the store off at
  concurrency 8 (issue 48): non-streamed <= 1.10x, streamed <= 1.05x;
- an idle open stream costs LGOS at most 64 KiB of server memory (RSS).
"""

from __future__ import annotations

from typing import Any

from lgos_bench.scenarios import TARGET_CONCURRENCY
from lgos_bench.workload import CITED, PLAIN, STATUS, TOOL

STREAM_CPU_LIMIT = 1.3
JSON_CPU_LIMIT = 1.2
FIRST_DELTA_LIMIT_MS = 2.0
INPROCESS_JSON_LIMIT = 1.10
SAME_WORK_JSON_LIMIT = 1.05
SAME_WORK_STREAM_LIMIT = 1.0
KEPT_RESPONSES = "lgos:LGOS_RESPONSE_STORE=postgres"
"""The side keeping every Response, judged against plain ``lgos``."""
KEPT_CONCURRENCY = 8
KEPT_JSON_LIMIT = 1.10
KEPT_STREAM_LIMIT = 1.05
IDLE_KIB_LIMIT = 64.0
VARIANT_LABELS = {
    STATUS: "commentary (3 status events)",
    CITED: "citations (2)",
    TOOL: "client tool call",
}


def pair_limit(a: str, b: str, *, stream: bool, concurrency: int = 1) -> float | None:
    """The bound an issue puts on side ``b``'s CPU (or instructions) per
    request against side ``a``'s, if any: LGOS against the same-work
    baseline (48), against the plain one non-streamed (39), kept Responses
    against the store off at concurrency 8 (48)."""
    if (a, b) == ("baseline-usage", "lgos"):
        return SAME_WORK_STREAM_LIMIT if stream else SAME_WORK_JSON_LIMIT
    if (a, b) == ("baseline", "lgos"):
        return None if stream else INPROCESS_JSON_LIMIT
    if (a, b) == ("lgos", KEPT_RESPONSES) and concurrency == KEPT_CONCURRENCY:
        return KEPT_STREAM_LIMIT if stream else KEPT_JSON_LIMIT
    return None


def _find(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any] | None:
    for row in rows:
        if all(row[key] == value for key, value in match.items()):
            return row
    return None


def evaluate_targets(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per target and API; ``met`` is ``None`` when not measured."""
    targets = []
    for api in ("chat", "responses"):
        for stream, limit in ((True, STREAM_CPU_LIMIT), (False, JSON_CPU_LIMIT)):
            row = _find(
                scenarios,
                api=api,
                stream=stream,
                model=PLAIN,
                concurrency=TARGET_CONCURRENCY,
            )
            value = row["ratio"]["cpu_ms_per_req"] if row else None
            mode = "streaming" if stream else "non-streaming"
            targets.append(
                {
                    "kind": "cpu",
                    "scenario": row["key"] if row else None,
                    "target": f"{api} {mode}: server CPU/request ratio at c=8",
                    "limit": f"<= {limit}x",
                    "value": value,
                    "met": None if value is None else value <= limit,
                }
            )
        row = _find(scenarios, api=api, stream=True, model=PLAIN, concurrency=1)
        gap = None
        if row:
            lgos = row["lgos"]["first_delta_p50_ms"]
            base = row["baseline"]["first_delta_p50_ms"]
            gap = None if lgos is None or base is None else lgos - base
        targets.append(
            {
                "kind": "first_delta",
                "scenario": row["key"] if row else None,
                "target": f"{api} streaming: first delta p50 at c=1, LGOS - baseline",
                "limit": f"<= {FIRST_DELTA_LIMIT_MS} ms",
                "value": gap,
                "met": None if gap is None else gap <= FIRST_DELTA_LIMIT_MS,
            }
        )
    return targets


def evaluate_inprocess(apps: dict[str, Any]) -> list[dict[str, Any]]:
    """Non-streamed CPU per request in process, LGOS / baseline."""
    targets = []
    for api in ("chat", "responses"):
        key = f"{api}/json/{PLAIN.removeprefix('bench-')}"
        row = apps.get(key)
        value = row["ratio"] if row else None
        targets.append(
            {
                "kind": "inprocess",
                "scenario": key if row else None,
                "target": f"{api} non-streaming: CPU/request ratio in process",
                "limit": f"<= {INPROCESS_JSON_LIMIT}x",
                "value": value,
                "met": None if value is None else value <= INPROCESS_JSON_LIMIT,
            }
        )
    return targets


def evaluate_idle(idle: dict[str, Any]) -> list[dict[str, Any]]:
    """LGOS's memory per idle open stream, per API (``idle.py``)."""
    targets = []
    for api, row in idle.items():
        value = row["lgos"]["kib_per_stream"]
        targets.append(
            {
                "kind": "idle",
                "scenario": f"{api}/stream/idle",
                "target": f"{api} streaming: KiB of server RSS per idle open stream",
                "limit": f"<= {IDLE_KIB_LIMIT:g} KiB",
                "value": value,
                "met": value <= IDLE_KIB_LIMIT,
            }
        )
    return targets


def extra_costs(
    apps: dict[str, Any], variants: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """CPU per request a variant adds over the plain graph, per server.

    The extra is taken from the in-process measurements (``apps``: both ASGI
    apps, no sockets, interleaved), which a busy machine barely disturbs; the
    LGOS/baseline ratio over HTTP at concurrency 8 is given beside it.
    """
    over_http = {row["key"].rsplit("/", 1)[0]: row for row in variants}
    rows = []
    for key, row in apps.items():
        api, mode, model = key.split("/")
        if model == PLAIN.removeprefix("bench-"):
            continue
        plain = apps[f"{api}/{mode}/{PLAIN.removeprefix('bench-')}"]
        extra = {
            kind: row[kind]["cpu_ms_per_run"] - plain[kind]["cpu_ms_per_run"]
            for kind in ("baseline", "lgos")
        }
        http = over_http.get(key)
        rows.append(
            {
                "what": VARIANT_LABELS[f"bench-{model}"],
                "key": key,
                "baseline_extra_ms": extra["baseline"],
                "lgos_extra_ms": extra["lgos"],
                "lgos_extra_pct_of_plain": 100
                * extra["lgos"]
                / plain["lgos"]["cpu_ms_per_run"],
                "lgos_over_baseline_extra_ms": extra["lgos"] - extra["baseline"],
                "cpu_ratio_in_process": row["ratio"],
                "cpu_ratio_over_http": http["ratio"]["cpu_ms_per_req"]
                if http
                else None,
            }
        )
    return rows
