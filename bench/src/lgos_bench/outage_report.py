"""``lgos-bench outage``'s figures, per phase (``outage_markdown`` writes
them as the report).

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
from typing import Any

from lgos_bench.figures import percentile
from lgos_bench.outage_load import Answer, Ending, Kind, Probe, Records
from lgos_bench.outage_supervisor import Exit

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
