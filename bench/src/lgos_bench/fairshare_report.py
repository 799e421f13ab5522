"""``lgos-bench fairshare``'s figures, issue 46's targets and the report.

The targets, as the issue states them for its setup (1 s runs, A's
120-line batch, C's 4-line batch, ``LGOS_MAX_RUNS`` 8 under a burst of 24):

- B's p50 wait beside one and beside two of A's batches: at most
  2 x its idle-worker p50 + 250 ms;
- C's batch beside A's: done within 15 s;
- A's batch beside B's and C's work: at most 1.2 x its time alone;
- the burst: every refused request answered within 50 ms (and at least one
  refused: without admission control nothing is), the accepted ones' p99 at
  most 1.5 x the unloaded burst's p99.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from lgos_bench.batches import BatchEnd
from lgos_bench.fairshare_load import Sample
from lgos_bench.figures import percentile
from lgos_bench.report import fmt, write_pair

WAIT_FACTOR, WAIT_SLACK_MS = 2.0, 250.0
SMALL_BESIDE_S = 15.0
BULK_RATIO = 1.2
REFUSED_MS = 50.0
ACCEPTED_RATIO = 1.5
REFUSALS = (429, 503)
WAITS = (
    ("idle", "an idle worker"),
    ("one_batch", "one batch of A"),
    ("two_batches", "two batches of A"),
)


def _ms(values: list[float]) -> dict[str, float | None]:
    ms = [value * 1000 for value in values]
    return {
        "p50": percentile(ms, 50),
        "p90": percentile(ms, 90),
        "p99": percentile(ms, 99),
        "min": min(ms, default=None),
        "max": max(ms, default=None),
    }


def interactive(samples: list[Sample]) -> dict[str, Any]:
    """B's runs: how they ended and their waits for a slot."""
    waits = [s.wait for s in samples if s.wait is not None]
    return {
        "submitted": len(samples),
        "completed": sum(s.status == "completed" for s in samples),
        "statuses": dict(Counter(s.status for s in samples)),
        "wait_ms": _ms(waits),
        "waits_s": [round(wait, 4) for wait in waits],
    }


def bucket_quantile(buckets: dict[float, float], q: float) -> float | None:
    """The ``q`` quantile (0-1) of a cumulative histogram, interpolated in
    its bucket as Prometheus's ``histogram_quantile`` does."""
    total = buckets.get(math.inf, 0.0)
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for bound in sorted(buckets):
        count = buckets[bound]
        if count >= rank:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return lower


def worker_wait(
    before: dict[float, float], after: dict[float, float]
) -> dict[str, float | None]:
    """The worker's queue-wait histogram over a stretch: runs and p50/p90."""
    delta = {bound: after[bound] - before.get(bound, 0.0) for bound in after}
    p50, p90 = bucket_quantile(delta, 0.5), bucket_quantile(delta, 0.9)
    return {
        "runs": delta.get(math.inf, 0.0),
        "p50_ms": None if p50 is None else p50 * 1000,
        "p90_ms": None if p90 is None else p90 * 1000,
    }


def batch_record(
    end: BatchEnd, tenant: str, lines: int, origin: float
) -> dict[str, Any]:
    """A batch's figures, its creation and end from ``origin`` (seconds)."""
    return {
        "tenant": tenant,
        "lines": lines,
        **end.figures(),
        "created_s": end.created - origin,
        "ended_s": end.ended - origin,
    }


def _burst(answers: list[dict[str, Any]]) -> dict[str, Any]:
    accepted = [a["seconds"] for a in answers if a["status"] == 200]
    refused = [a for a in answers if a["status"] in REFUSALS]
    return {
        "requests": len(answers),
        "accepted": len(accepted),
        "refused": len(refused),
        "errors": len(answers) - len(accepted) - len(refused),
        "accepted_ms": _ms(accepted),
        "refused_ms": _ms([a["seconds"] for a in refused]),
        "refused_by": dict(Counter(f"{a['status']} {a['code']}" for a in refused)),
        "refused_without_retry_after": sum(not a["retry_after"] for a in refused),
    }


def _target(
    target: str, limit: str, value: float | None, bound: float | None, unit: str
) -> dict[str, Any]:
    """One target's row; ``met`` is ``None`` when it could not be judged."""
    met = None if value is None or bound is None else value <= bound
    return {"target": target, "limit": limit, "value": value, "unit": unit, "met": met}


def _shown(target: dict[str, Any]) -> str:
    if target["value"] is None:
        return "–"
    return f"{fmt(float(target['value']), 2)}{target['unit']}"


def targets(figures: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    if "waits" in figures:
        idle = figures["waits"]["idle"]["interactive"]["wait_ms"]["p50"]
        bound = None if idle is None else WAIT_FACTOR * idle + WAIT_SLACK_MS
        for key, label in WAITS[1:]:
            value = figures["waits"][key]["interactive"]["wait_ms"]["p50"]
            found.append(
                _target(
                    f"B's p50 wait beside {label}",
                    f"<= 2 x idle p50 + 250 ms = {fmt(bound, 0)} ms",
                    value,
                    bound,
                    " ms",
                )
            )
    if "small" in figures:
        small = figures["small"]["beside"]["small"]
        found.append(
            _target(
                f"C's {small['lines']}-line batch beside A's: total",
                f"<= {SMALL_BESIDE_S:g} s",
                small["total_s"],
                SMALL_BESIDE_S,
                " s",
            )
        )
    if "bulk" in figures:
        found.append(
            _target(
                "A's batch beside B's and C's work / alone",
                f"<= {BULK_RATIO:g}x",
                figures["bulk"]["ratio"],
                BULK_RATIO,
                "x",
            )
        )
    if "burst" in figures:
        loaded, unloaded = figures["burst"]["loaded"], figures["burst"]["unloaded"]
        refused = _target(
            "burst: slowest refused answer",
            f"<= {REFUSED_MS:g} ms, and some refused",
            loaded["refused_ms"]["max"],
            REFUSED_MS,
            " ms",
        )
        if not loaded["refused"]:
            refused.update(target="burst: slowest refused answer (none refused)")
            refused["met"] = False
        found.append(refused)
        ratio = _ratio(loaded["accepted_ms"]["p99"], unloaded["accepted_ms"]["p99"])
        found.append(
            _target(
                "burst: accepted p99 / unloaded p99",
                f"<= {ACCEPTED_RATIO:g}x",
                ratio,
                ACCEPTED_RATIO,
                "x",
            )
        )
    return found


def _ratio(value: float | None, base: float | None) -> float | None:
    return None if value is None or not base else value / base


def results(meta: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The JSON of a run: what was measured, with the burst and A's ratio
    summarised and the targets judged."""
    figures = dict(measured)
    if "bulk" in figures:
        bulk = figures["bulk"]
        bulk["ratio"] = _ratio(
            bulk["beside"]["bulk"]["total_s"], bulk["alone"]["total_s"]
        )
    if "burst" in figures:
        raw = figures["burst"]
        figures["burst"] = {
            "max_runs": raw["max_runs"],
            "unloaded": _burst(raw["unloaded"]),
            "loaded": _burst(raw["loaded"]),
            "answers": {
                "unloaded": [_answer(a) for a in raw["unloaded"]],
                "loaded": [_answer(a) for a in raw["loaded"]],
            },
        }
    return {"meta": meta, "targets": targets(figures), **figures}


def _answer(answer: dict[str, Any]) -> list[Any]:
    """``[status, ms]``: the raw burst, compact."""
    return [answer["status"], round(answer["seconds"] * 1000, 2)]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return [*lines, ""]


def _s(value: float | None) -> str:
    return fmt(value, 1)


def _waits(waits: dict[str, Any]) -> list[str]:
    rows = []
    for key, label in WAITS:
        part = waits[key]
        runs, worker = part["interactive"], part["worker_wait"]
        rows.append(
            [
                label,
                f"{runs['completed']}/{runs['submitted']}",
                *(fmt(runs["wait_ms"][q], 0) for q in ("p50", "p90", "max")),
                f"{fmt(worker['p50_ms'], 0)} / {fmt(worker['p90_ms'], 0)}",
                ", ".join(_s(b["total_s"]) for b in part["batches"]) or "–",
            ]
        )
    header = ["beside", "completed", "p50 ms", "p90 ms", "max ms"]
    header += ["worker's histogram p50 / p90 ms", "A's batch(es) total s"]
    return _table(header, rows)


def _batch_row(label: str, batch: dict[str, Any]) -> list[str]:
    counts = batch["request_counts"]
    return [
        label,
        f"{batch['status']} {counts.get('completed', 0)}/{counts.get('total', 0)}",
        _s(batch["total_s"]),
        _s(batch["validate_s"]),
        _s(batch["run_s"]),
        _s(batch["finalize_s"]),
        _s(batch["ended_s"]),
    ]


_BATCH_HEADER = ["batch", "status", "total s", "validating s", "in progress s"]
_BATCH_HEADER += ["finalizing s", "ended at s"]


def _burst_rows(burst: dict[str, Any]) -> list[str]:
    rows = []
    for key, label in (("unloaded", "unloaded"), ("loaded", "3 x the limit")):
        part = burst[key]
        accepted, refused = part["accepted_ms"], part["refused_ms"]
        rows.append(
            [
                label,
                str(part["requests"]),
                str(part["accepted"]),
                str(part["refused"]),
                str(part["errors"]),
                fmt(accepted["p50"], 1),
                fmt(accepted["p99"], 1),
                fmt(refused["p50"], 1),
                fmt(refused["max"], 1),
                ", ".join(f"{k}: {v}" for k, v in part["refused_by"].items()) or "–",
                str(part["refused_without_retry_after"]),
            ]
        )
    header = ["burst", "requests", "accepted", "refused", "errors"]
    header += ["accepted p50 ms", "p99 ms", "refused p50 ms", "max ms"]
    header += ["refused as", "without Retry-After"]
    return _table(header, rows)


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    plan = meta["plan"]
    settings = ", ".join(f"`{k}={v}`" for k, v in meta["settings"].items())
    lines = [
        "# lgos-bench: fair share between tenants under contention",
        "",
        f"LGOS {meta['lgos_revision']} (core last changed in "
        f"{meta['lgos_core_commit']}; `{meta['lgos_python']}`), started "
        f"{meta['started']}; other processes kept {meta['background_cores_before']}"
        f" cores busy before the run and {meta['background_cores_after']} after "
        f"(load average {fmt(meta['load_average_before'], 1)}); "
        f"{fmt(meta['wall_seconds'], 0)} s in all. One `lgos serve`, one `lgos "
        f"worker` on PostgreSQL, the Files API; {settings} (a tree that does "
        "not know a setting ignores it), everything else at its defaults. "
        "Tenants A, B, C (an API key each). Runs and batch lines "
        f"wait {plan['wait_s']:g} s like a model call. A's batch: "
        f"{plan['lines']} lines, C's: {plan['small_lines']}; B submits a "
        f"background Response every {plan['every']:g} s ({plan['samples']} per "
        "part of the first phase).",
        "",
        "## Targets (issue 46)",
        "",
    ]
    lines += _table(
        ["target", "limit", "value", "met"],
        [
            [t["target"], t["limit"], _shown(t), fmt(t["met"])]
            for t in results["targets"]
        ],
    )
    if results["exits"]:
        exits = ", ".join(
            f"{e['process']} (code {e['code']})" for e in results["exits"]
        )
        lines += [f"**Exited during the run:** {exits}.", ""]
    if "waits" in results:
        lines += [
            "## B's wait for a slot",
            "",
            "From sending the submission to its run's node starting (read from "
            "the run's answer); the worker's `lgos_background_queue_wait_seconds` "
            "over the same runs, interpolated in its buckets. B starts "
            f"{plan['settle_s']:g} s after A's first batch is `in_progress`.",
            "",
            *_waits(results["waits"]),
        ]
    if "small" in results:
        small = results["small"]
        lines += [
            "## C's small batch",
            "",
            f"Beside A's batch, C's is created {plan['small_after_s']:g} s after "
            "A's went `in_progress`; *ended at* counts from the first batch's "
            "creation.",
            "",
        ]
        rows = [_batch_row("C alone", small["alone"])]
        rows.append(_batch_row("C beside A's", small["beside"]["small"]))
        rows.append(_batch_row("A's (beside C's)", small["beside"]["bulk"]))
        lines += _table(_BATCH_HEADER, rows)
    if "bulk" in results:
        bulk = results["bulk"]
        runs = bulk["beside"]["interactive"]
        lines += [
            "## A's batch alone and beside B's and C's work",
            "",
            f"Beside: B's runs every {plan['every']:g} s while A's batch runs "
            f"({runs['completed']}/{runs['submitted']} completed, wait p50 "
            f"{fmt(runs['wait_ms']['p50'], 0)} ms) and C's batch. A's time "
            f"beside / alone: {fmt(bulk['ratio'])}x.",
            "",
        ]
        rows = [_batch_row("A alone", bulk["alone"])]
        rows.append(_batch_row("A beside B and C", bulk["beside"]["bulk"]))
        rows.append(_batch_row("C (beside)", bulk["beside"]["small"]))
        lines += _table(_BATCH_HEADER, rows)
    if "burst" in results:
        burst = results["burst"]
        lines += [
            "## Admission burst",
            "",
            f"Streamed Responses of the plain graph ({plan['burst_tokens']} "
            f"tokens) from one tenant, {plan['burst_rounds']} rounds of "
            f"{burst['max_runs']} at once (unloaded) then "
            f"{3 * burst['max_runs']} (3 x `LGOS_MAX_RUNS`); latency to the "
            "last byte.",
            "",
            *_burst_rows(burst),
        ]
    return "\n".join(lines)


def write(results: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """``<timestamp>-fairshare.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
