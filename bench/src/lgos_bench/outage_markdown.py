"""``lgos-bench outage``'s report: the figures ``outage_report`` computed,
as markdown tables beside their JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lgos_bench.outage_report import BUCKETS, PROBE_LIMIT
from lgos_bench.report import RESULTS_DIR, fmt, write_pair


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return [*lines, ""]


def _s(value: float | None) -> str:
    return fmt(value, 2)


def _ready_again(figures: dict[str, Any]) -> str:
    if not figures["all_back"]:
        return "not in the phase"
    return _s(figures["ready_again_after_s"])


def render(results: dict[str, Any]) -> str:
    meta, phases = results["meta"], results["phases"]
    plan = meta["plan"]
    lines = [
        "# lgos-bench: what clients see while PostgreSQL goes away and comes back",
        "",
        f"LGOS {meta['lgos_revision']} (core last changed in "
        f"{meta.get('lgos_core_commit', '–')}; `{meta['lgos_python']}`), started "
        f"{meta['started']}; other processes kept {meta['background_cores_before']} "
        f"cores busy before the run; {fmt(meta.get('wall_seconds'), 0)} s in all. "
        f"1 `lgos serve`, {plan['workers']} `lgos worker` on PostgreSQL "
        "(background backend and response store). Load: a background run "
        f"submitted every {plan['submit_every']:g} s (retried with its "
        f"Idempotency-Key up to {plan['give_up_s']:g} s), "
        f"{plan['foreground_clients']} clients sending stored non-streamed "
        f"Responses back to back, readiness probed every {plan['probe_every']:g} s "
        f"({plan['probe_timeout']:g} s timeout). Each phase: {plan['steady_s']:g} s "
        f"steady, the fault, at least {plan['recovery_s']:g} s of recovery.",
        "",
        "## Background runs (by the phase they were submitted in)",
        "",
    ]
    rows = []
    for phase in phases:
        runs = phase["runs"]
        rows.append(
            [
                phase["phase"],
                str(runs["submitted"]),
                str(runs["accepted"]),
                str(runs["completed"]),
                str(runs["failed"]),
                str(runs["cancelled"]),
                str(runs["other"]),
                str(runs["not_ended"]),
                str(runs["never_accepted"]),
                _s(runs["longest_wait_to_accept_s"]),
            ]
        )
    header = [
        "phase",
        "submitted",
        "accepted",
        "completed",
        "failed",
        "cancelled",
        "other",
        "not ended",
        "never accepted",
        "longest wait to accept s",
    ]
    lines += _table(header, rows)
    lines += [
        "## Answers (every HTTP answer, retries included)",
        "",
    ]
    rows = []
    for phase in phases:
        for kind, label in (
            ("submissions", "submissions"),
            ("foreground", "foreground"),
        ):
            figures = phase[kind]
            during = figures["during_fault"]
            rows.append(
                [
                    phase["phase"] if kind == "submissions" else "",
                    label,
                    str(figures["answers"]),
                    *(str(figures["buckets"][bucket]) for bucket in BUCKETS),
                    _s(during["longest_s"]),
                    _s(during["p50_s"]),
                    _s(during["p99_s"]),
                ]
            )
    header = [
        "phase",
        "requests",
        "answers",
        *BUCKETS[:-1],
        "transport errors",
        "during the fault: longest s",
        "p50 s",
        "p99 s",
    ]
    lines += _table(header, rows)
    lines += ["## Readiness and recovery (seconds from the fault's start or end)", ""]
    rows = []
    for phase in phases:
        api, workers = phase["readiness"]["api"], phase["readiness"]["workers"]
        rows.append(
            [
                phase["phase"],
                _s(phase["fault_s"]),
                _s(api["slowest_s"]),
                _s(api["not_ready_after_s"]),
                _ready_again(api),
                _s(workers["slowest_s"]),
                _s(workers["not_ready_after_s"]),
                _ready_again(workers),
                str(api["over_limit"] + workers["over_limit"]),
                _s(phase["first_new_run_completed_s"]),
                ", ".join(e["target"] for e in phase["exits"]) or "none",
                f"{sum(phase['listening_before'].values())} → "
                f"{sum(phase['listening_after'].values())}",
            ]
        )
    header = [
        "phase",
        "fault s",
        "API slowest probe",
        "API not ready after start",
        "API ready again after end",
        "workers slowest probe",
        "workers not ready after start",
        "workers ready again after end",
        f"probes over {PROBE_LIMIT:g} s",
        "first new run completed after end",
        "lgos processes exited",
        "LISTEN sessions before → after",
    ]
    lines += _table(header, rows)
    if results.get("exits"):
        lines += [
            "## lgos processes that exited (each started again by the bench)",
            "",
            *_table(
                ["process", "seen gone at s", "exit code", "ready again after s"],
                [
                    [
                        e["target"],
                        _s(e["seen_s"]),
                        fmt(e["code"]),
                        _s(e["ready_again_after_s"]),
                    ]
                    for e in results["exits"]
                ],
            ),
        ]
    details = _details(phases)
    if details:
        lines += ["## Details", "", *details, ""]
    lines += _logged(results.get("logged", []))
    return "\n".join(lines)


def _details(phases: list[dict[str, Any]]) -> list[str]:
    """What the tables count but do not name: error codes, transport
    errors, how failed runs failed, recoveries cut by their bound."""
    lines = []
    for phase in phases:
        said = []
        for kind in ("submissions", "foreground"):
            figures = phase[kind]
            parts = [f"{code} ×{n}" for code, n in sorted(figures["codes"].items())]
            parts += [
                f"{e} ×{n}" for e, n in sorted(figures["transport_errors"].items())
            ]
            if parts:
                said.append(f"{kind}: " + ", ".join(parts))
        for kind in ("submissions", "foreground"):
            by_status = phase[kind]["during_fault"].get("by_status", {})
            if set(by_status) - {"200"}:
                said.append(
                    f"{kind} under way during the fault: "
                    + ", ".join(
                        f"{bucket} ×{f['answers']} (longest {fmt(f['longest_s'])} s)"
                        for bucket, f in by_status.items()
                    )
                )
        failures = phase["runs"]["failures"]
        if failures:
            said.append(
                "failed runs: " + "; ".join(f"{e} ×{n}" for e, n in failures.items())
            )
        other = phase["runs"]["other_statuses"]
        if other:
            said.append(
                "other endings: " + ", ".join(f"{k} ×{n}" for k, n in other.items())
            )
        if not phase["recovered"]:
            said.append("recovery cut by its time bound")
        if said:
            lines.append(f"- **{phase['phase']}**: " + "; ".join(said))
    return lines


LOGGED_ROWS = 25


def _cell(text: str | None) -> str:
    """Free text in a table cell: no pipes, no runs of spaces; a server's
    refusal from its ``FATAL:`` on (the connection's address is noise)."""
    if not text:
        return "–"
    if "FATAL:" in text:
        text = text[text.index("FATAL:") :]
    return " ".join(text.replace("|", "/").split())[:100]


def _logged(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return ["## Logged by the fleet", "", "No warning or error was logged.", ""]
    body = [
        [
            row["process"],
            row["level"],
            f"`{row['event']}`",
            f"`{row['exception']}`" if row["exception"] else "–",
            f"`{row['raised_at']}`" if row["raised_at"] else "–",
            f"`{row['first_cause']}`" if row["first_cause"] else "–",
            _cell(row.get("says")),
            ", ".join(f"{phase} {n}" for phase, n in row["phases"].items()),
        ]
        for row in rows[:LOGGED_ROWS]
    ]
    header = [
        "process",
        "level",
        "record",
        "exception",
        "raised at",
        "first cause",
        "which says",
        "count by phase",
    ]
    more = len(rows) - LOGGED_ROWS
    tail = [f"… and {more} more groups in the JSON.", ""] if more > 0 else []
    return [
        "## Logged by the fleet (warnings and errors)",
        "",
        *_table(header, body),
        *tail,
    ]


def write(results: dict[str, Any], directory: Path = RESULTS_DIR) -> tuple[Path, Path]:
    """``<timestamp>-outage.md`` and ``.json`` in ``directory``."""
    return write_pair(results, render(results), directory)
