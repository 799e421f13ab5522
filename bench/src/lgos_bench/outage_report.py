"""``lgos-bench outage``'s figures, per phase, and its report.

Each phase is cut from the clients' records by the events the bench
stamped (``Phase``): a record belongs to the phase during which it was
sent; *during the fault* means an exchange that was under way at some
moment between the fault's start and its end. Nothing here measures: the
figures are computed from what ``outage_load`` recorded, so they can be
checked offline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lgos_bench.figures import percentile
from lgos_bench.outage_load import Answer, Ending, Kind, Probe, Records
from lgos_bench.outage_supervisor import Exit
from lgos_bench.report import RESULTS_DIR, fmt, write_pair

PROBE_LIMIT = 1.0
"""Issue 45's bound on a readiness probe (a Kubernetes probe's default
timeout)."""


@dataclass(frozen=True, slots=True)
class Phase:
    """One phase's events (``time.monotonic()``)."""

    name: str
    began: float
    """Its steady period starts."""
    fault_began: float
    fault_ended: float
    ended: float
    """Its recovery period ended: the next phase begins."""
    first_completed: float | None
    """When the first background run submitted after the fault's end was
    seen completed (``None``: none within the recovery)."""
    recovered: bool
    """Whether the recovery ended on its events (every probe 200, a new run
    completed) rather than on its time bound."""
    listening_before: Mapping[str, int] = field(default_factory=dict)
    """The database's LISTEN sessions by statement just before the fault
    (``outage.listening``)..."""
    listening_after: Mapping[str, int] = field(default_factory=dict)
    """... and at the end of the recovery."""


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def _runs(
    phase: Phase, records: Records, endings: Mapping[str, Ending]
) -> dict[str, Any]:
    submitted = [s for s in records.submissions if phase.began <= s.sent < phase.ended]
    accepted = [s for s in submitted if s.response_id]
    statuses = Counter(
        endings[s.response_id].status if s.response_id in endings else "not ended"
        for s in accepted
        if s.response_id
    )
    failures = Counter(
        endings[s.response_id].error or "no error given"
        for s in accepted
        if s.response_id
        and s.response_id in endings
        and endings[s.response_id].status == "failed"
    )
    main = ("completed", "failed", "cancelled", "not ended")
    waits = [s.accepted - s.sent for s in accepted if s.accepted is not None]
    return {
        "submitted": len(submitted),
        "accepted": len(accepted),
        **{key.replace(" ", "_"): statuses.get(key, 0) for key in main},
        "other": sum(n for status, n in statuses.items() if status not in main),
        "other_statuses": {k: n for k, n in statuses.items() if k not in main},
        "never_accepted": len(submitted) - len(accepted),
        "retried": sum(1 for s in submitted if s.tries > 1),
        "longest_wait_to_accept_s": _round(max(waits, default=None)),
        "failures": dict(failures),
    }


def _bucket(answer: Answer) -> str:
    status = answer.status
    if status is None:
        return "transport"
    if status == 200 or status == 500 or status == 503:
        return str(status)
    if 400 <= status < 500:
        return "4xx"
    return "other"


BUCKETS = ("200", "4xx", "500", "503", "other", "transport")


def _during(answers: Iterable[Answer], began: float, ended: float) -> list[Answer]:
    """The exchanges under way at some moment of ``[began, ended]``."""
    return [a for a in answers if a.sent <= ended and a.sent + a.took >= began]


def _answers(phase: Phase, records: Records, kind: Kind) -> dict[str, Any]:
    mine = [
        a
        for a in records.answers
        if a.kind == kind and phase.began <= a.sent < phase.ended
    ]
    under_way = _during(mine, phase.fault_began, phase.fault_ended)
    during = [a.took for a in under_way]
    by_bucket = {
        bucket: [a.took for a in under_way if _bucket(a) == bucket]
        for bucket in BUCKETS
    }
    statuses = Counter(str(a.status) for a in mine if a.status is not None)
    return {
        "answers": len(mine),
        "buckets": {
            bucket: sum(_bucket(a) == bucket for a in mine) for bucket in BUCKETS
        },
        "statuses": dict(statuses),
        "codes": dict(
            Counter(f"{a.status} {a.error}" for a in mine if a.status and a.error)
        ),
        "transport_errors": dict(Counter(a.error for a in mine if a.status is None)),
        "during_fault": {
            "answers": len(during),
            "longest_s": _round(max(during, default=None)),
            "p50_s": _round(percentile(during, 50)),
            "p99_s": _round(percentile(during, 99)),
            "by_status": {
                bucket: {"answers": len(took), "longest_s": _round(max(took))}
                for bucket, took in by_bucket.items()
                if took
            },
        },
    }


def _answered(probe: Probe) -> float:
    """When the prober learned the probe's verdict (its answer, or its
    timeout): what an orchestrator acts on."""
    return probe.sent + probe.took


def _target(phase: Phase, probes: list[Probe]) -> dict[str, Any]:
    """One target's readiness around the fault: when the first probe sent
    after the fault began that did not answer 200 was answered, and when
    the first probe that answered 200 after the last one that did not was
    (negative: before the fault ended)."""
    after = [p for p in probes if p.sent >= phase.fault_began]
    bad = [p for p in after if p.status != 200]
    if not bad:
        return {"not_ready_after_s": None, "ready_again_after_s": None, "back": True}
    good = next((p for p in after if p.sent > bad[-1].sent and p.status == 200), None)
    return {
        "not_ready_after_s": _round(_answered(bad[0]) - phase.fault_began),
        "ready_again_after_s": (
            _round(_answered(good) - phase.fault_ended) if good else None
        ),
        "back": good is not None,
        "reasons": dict(Counter(p.error or str(p.status) for p in bad)),
    }


def timeline(probes: Iterable[Probe], origin: float) -> dict[str, list[list[Any]]]:
    """Each target's readiness as it changed: ``[seconds since origin,
    status or error, slowest probe of the stretch s]`` per stretch."""
    lines: dict[str, list[list[Any]]] = {}
    for probe in probes:
        said = probe.status if probe.status is not None else probe.error
        stretches = lines.setdefault(probe.target, [])
        if stretches and stretches[-1][1] == said:
            stretches[-1][2] = max(stretches[-1][2], _round(probe.took))
        else:
            stretches.append([_round(probe.sent - origin), said, _round(probe.took)])
    return lines


def _readiness(phase: Phase, probes: list[Probe], group: str) -> dict[str, Any]:
    mine = [
        p
        for p in probes
        if (p.target == "api") == (group == "api")
        and phase.began <= p.sent < phase.ended
    ]
    targets = sorted({p.target for p in mine})
    each = {t: _target(phase, [p for p in mine if p.target == t]) for t in targets}
    turned = [
        v["not_ready_after_s"]
        for v in each.values()
        if v["not_ready_after_s"] is not None
    ]
    again = [
        v["ready_again_after_s"]
        for v in each.values()
        if v["ready_again_after_s"] is not None
    ]
    return {
        "probes": len(mine),
        "not_ready_probes": sum(1 for p in mine if p.status != 200),
        "slowest_s": _round(max((p.took for p in mine), default=None)),
        "over_limit": sum(1 for p in mine if p.took > PROBE_LIMIT),
        "not_ready_after_s": min(turned, default=None),
        "ready_again_after_s": max(again, default=None),
        "all_back": all(v["back"] for v in each.values()),
        "targets": each,
    }


def exits(found: Iterable[Exit], origin: float) -> list[dict[str, Any]]:
    """The processes seen gone, times as seconds since ``origin``."""
    return [
        {
            "target": exit.target,
            "seen_s": _round(exit.seen - origin),
            "code": exit.code,
            "ready_again_after_s": _round(
                None if exit.restarted is None else exit.restarted - exit.seen
            ),
        }
        for exit in found
    ]


def summarize(
    phase: Phase,
    records: Records,
    endings: Mapping[str, Ending],
    origin: float,
    found: Iterable[Exit] = (),
) -> dict[str, Any]:
    """One phase's figures; times of day as seconds since ``origin``;
    ``found``: the processes seen gone during the run."""
    first = phase.first_completed
    mine = [e for e in found if phase.began <= e.seen < phase.ended]
    return {
        "phase": phase.name,
        "began_s": _round(phase.began - origin),
        "fault_began_s": _round(phase.fault_began - origin),
        "fault_ended_s": _round(phase.fault_ended - origin),
        "ended_s": _round(phase.ended - origin),
        "fault_s": _round(phase.fault_ended - phase.fault_began),
        "recovered": phase.recovered,
        "runs": _runs(phase, records, endings),
        "submissions": _answers(phase, records, "submit"),
        "foreground": _answers(phase, records, "foreground"),
        "readiness": {
            "api": _readiness(phase, records.probes, "api"),
            "workers": _readiness(phase, records.probes, "workers"),
        },
        "first_new_run_completed_s": _round(
            None if first is None else first - phase.fault_ended
        ),
        "exits": exits(mine, origin),
        "listening_before": dict(phase.listening_before),
        "listening_after": dict(phase.listening_after),
    }


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
