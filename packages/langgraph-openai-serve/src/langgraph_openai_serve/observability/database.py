"""The database as this process meets it: outages and reconnects.

``lgos_database_faults_total`` counts store operations that met an outage,
by cause, where they meet it (``backends/postgres/database.py``);
``lgos_database_reconnects_total`` counts connections made again after the
database broke them: the pool's (counted when the pool is checked after a
fault, from psycopg_pool's own statistics) and the background-events
listener's. Together they tell an operator an outage happened, how long
requests met it and that the processes came back, without reading logs.
"""

from __future__ import annotations

from typing import Literal

from prometheus_client import Counter

FAULTS = Counter(
    "lgos_database_faults",
    "Database operations that met an outage: the connection broke or was "
    "refused (unavailable), the operation outlived LGOS_DATABASE_TIMEOUT "
    "(timeout), or no pooled connection was free in time (busy).",
    ["cause"],
)
FaultCause = Literal["unavailable", "timeout", "busy"]
"""What an outage is counted under; ``operations/outages.py``
``fault_cause`` names it for an error."""
_FAULTS = {cause: FAULTS.labels(cause) for cause in ("unavailable", "timeout", "busy")}

RECONNECTS = Counter(
    "lgos_database_reconnects",
    "Database connections made again after the database broke them: pooled "
    "ones the pool replaced (pool), the background-events listener (listener).",
    ["connection"],
)
_RECONNECTS = {name: RECONNECTS.labels(name) for name in ("pool", "listener")}


def count_fault(cause: FaultCause) -> None:
    _FAULTS[cause].inc()


def count_reconnects(connection: Literal["pool", "listener"], count: int = 1) -> None:
    if count > 0:
        _RECONNECTS[connection].inc(count)
