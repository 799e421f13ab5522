"""Requests refused at admission, by the limit they met (a bounded label
set: never a tenant's name)."""

from __future__ import annotations

from prometheus_client import Counter

REFUSED = Counter(
    "lgos_requests_refused",
    "Requests refused at once at admission, by the limit they met: a "
    "tenant's foreground runs in this process (tenant_runs), its queued or "
    "running background Responses (tenant_background) or open batches "
    "(tenant_batches), all 429s; or the process's runs (process_runs) or "
    "streams following background Responses (process_streams), 503s.",
    ["reason"],
)
_REFUSED = {
    reason: REFUSED.labels(reason)
    for reason in (
        "tenant_runs",
        "tenant_background",
        "tenant_batches",
        "process_runs",
        "process_streams",
    )
}


def refused(reason: str) -> None:
    _REFUSED[reason].inc()
